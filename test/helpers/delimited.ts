/**
 * Readers of CSV (RFC 4180) and of drover's TSV (`\t` `\n` `\r` `\\` escapes), written here on their own,
 * from the formats' rules, so export tests check drover against an independent reading.
 */

/** Parse CSV text into rows of fields: quoted fields may hold commas, quotes (doubled) and line breaks. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i++;
      } else {
        field += c;
        i++;
      }
    } else if (c === '"' && field === '') {
      quoted = true;
      i++;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += c === '\r' ? 2 : 1;
    } else {
      if (c === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
      field += c;
      i++;
    }
  }
  if (quoted) throw new Error('an unterminated quoted field');
  if (field !== '' || row.length > 0) throw new Error('the last line has no line end');
  return rows;
}

/** Parse drover's TSV: one line per row, fields split on tabs, escapes undone. */
export function parseTsv(text: string): string[][] {
  if (!text.endsWith('\n')) throw new Error('the last line has no line end');
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) =>
      line.split('\t').map((f) =>
        f.replace(/\\(.)/g, (_, e: string) => {
          const out = { t: '\t', n: '\n', r: '\r', '\\': '\\' }[e];
          if (out === undefined) throw new Error(`an unknown escape \\${e}`);
          return out;
        }),
      ),
    );
}

/**
 * A cell's value as it was before drover made it inert for spreadsheets (docs/cli.md): one `'` dropped from a
 * cell that begins with `'`s followed by `=`, `+`, `-`, `@`, tab or CR. Apply after parseCsv / parseTsv.
 */
export function undoInert(cell: string): string {
  return /^'+[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell;
}
