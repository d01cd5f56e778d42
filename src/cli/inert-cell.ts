/**
 * What keeps a CSV or TSV export from running anything when a spreadsheet opens it (CSV injection, OWASP):
 * a cell whose text a spreadsheet would read as a formula is written with a leading `'`, so it reads as text.
 * Every CSV and TSV writer of drover (`list --csv`, `list --tsv`, `results --csv`) passes each cell, header
 * included, through `inertCell` before quoting or escaping it.
 */

/**
 * Text a spreadsheet reads as a formula: it begins (after any `'`s, so the rule can be undone) with one of
 * OWASP's characters: `=`, `+`, `-`, `@`, tab, carriage return.
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;

/**
 * Text that begins with `-` and is data a spreadsheet cannot run: a plain decimal number (`-0.5`, `-3`,
 * `-1e-05`: the spreadsheet reads it as that number) or an option name (`--lr`, `-n`, `--model.lr`: dashes,
 * a letter, then letters, digits, `_`, `.` and `-`, so no operator, call, link or DDE a formula needs).
 */
const DATA = /^(?:-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|--?[A-Za-z][\w.-]*)$/;

/**
 * A cell's text made inert for spreadsheets: one `'` is put before text that begins, after any `'`s, with
 * `=`, `+`, `-`, `@`, tab or CR — unless it is a plain number or an option name (DATA). A reader undoes it by
 * dropping one `'` from a cell that begins with `'`s and then one of those characters.
 */
export function inertCell(text: string): string {
  return FORMULA_START.test(text) && !DATA.test(text) ? `'${text}` : text;
}
