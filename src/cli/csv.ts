import { inertCell } from './inert-cell.js';

/**
 * CSV as RFC 4180 writes it: a field with a comma, a quote, CR or LF is quoted, its quotes doubled; a field
 * a spreadsheet would run as a formula starts with `'` (inert-cell.ts).
 */

/** One CSV field: made inert (inert-cell.ts), then quoted when it holds a comma, a quote or a line break. */
export function csvField(text: string): string {
  const cell = inertCell(text);
  return /[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/** One CSV record, with its CRLF. */
export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}
