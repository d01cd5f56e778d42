/**
 * Plain aligned tables for long listings (`drover list` of 100,000 tasks), written a chunk of lines at a time
 * with widths known beforehand: the work grows with the rows, never with their square. The look is printTable's
 * (columns padded by one space and separated by two); the last column is not padded, so a long command never
 * pushes trailing blanks.
 */

const CONTROL = /[\u0000-\u001f\u007f]/;
const CONTROLS = /[\u0000-\u001f\u007f]/g;
const PLAIN = /^[ -~]*$/;

/** Text of a cell: newlines, tabs and other control characters escaped, so a row stays on its line. */
export function cellText(value: string | number): string {
  const s = String(value);
  return CONTROL.test(s) ? s.replace(CONTROLS, (c) => JSON.stringify(c).slice(1, -1)) : s;
}

const ZERO_WIDTH = /\p{M}|\u200b|\u200c|\u200d|\ufeff/u;
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;

/** Columns a cell's text takes in a terminal: wide (CJK, emoji) characters 2, combining marks 0. */
export function displayWidth(text: string): number {
  if (PLAIN.test(text)) return text.length;
  let w = 0;
  for (const ch of text) {
    if (ch.codePointAt(0)! < 0x300) w += 1;
    else if (!ZERO_WIDTH.test(ch)) w += WIDE.test(ch) ? 2 : 1;
  }
  return w;
}

/** One line of a table: each cell but the last padded to its column's width (cells are cellText already). */
export function tableLine(cells: readonly string[], widths: readonly number[]): string {
  const last = cells.length - 1;
  let line = '';
  for (let i = 0; i <= last; i++) {
    const c = cells[i]!;
    line += i < last ? ` ${c}${' '.repeat(Math.max(0, widths[i]! - displayWidth(c)))}   ` : ` ${c}`;
  }
  return line;
}

/** Write lines to stdout, joined, in one write per call (the caller passes a chunk of a few thousand). */
export function writeLines(lines: readonly string[]): void {
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
}

/** A cell's text cut to at most `width` columns, ending in `…` when it was longer. */
export function cut(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let w = 0;
  for (const ch of text) {
    const cw = displayWidth(ch);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return `${out}…`;
}
