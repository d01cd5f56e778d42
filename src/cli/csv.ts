/** CSV as RFC 4180 writes it: a field with a comma, a quote, CR or LF is quoted, its quotes doubled; CRLF lines. */

/** One CSV field. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV record, with its CRLF. */
export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}
