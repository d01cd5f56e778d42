/**
 * Plain aligned tables for long listings (`drover list` of 100,000 tasks): one pass to measure the columns, one
 * to write, a chunk of lines at a time; the work grows with the rows, never with their square. The look is
 * printTable's (a header row, columns padded by one space and separated by two); the last column is not padded,
 * so a long command never pushes trailing blanks.
 */

/** Escape what would break a table line: newlines, tabs and other control characters. */
function cellText(value: string | number): string {
  return String(value).replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

const ZERO_WIDTH = /\p{M}|\u200b|\u200c|\u200d|\ufeff/u;
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;

/** Columns a string takes in a terminal: wide (CJK, emoji) characters 2, combining marks 0. */
export function displayWidth(text: string): number {
  let w = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code < 0x300) w += 1;
    else if (ZERO_WIDTH.test(ch)) w += 0;
    else w += WIDE.test(ch) ? 2 : 1;
  }
  return w;
}

/** Lines written per write(2): large enough to be cheap, small enough to keep memory flat. */
const LINES_PER_WRITE = 2000;

/** Write a table with a header to stdout, in time linear in its size. */
export function writeTable(head: readonly string[], rows: readonly (readonly (string | number)[])[]): void {
  const last = head.length - 1;
  const widths = head.map((h) => displayWidth(h));
  const texts = rows.map((r) =>
    r.map((v, i) => {
      const t = cellText(v);
      if (i < last) widths[i] = Math.max(widths[i]!, displayWidth(t));
      return t;
    }),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i < last ? ` ${c}${' '.repeat(widths[i]! - displayWidth(c))} ` : ` ${c}`))
      .join('  ');
  let chunk: string[] = [line(head.map(cellText))];
  for (const cells of texts) {
    chunk.push(line(cells));
    if (chunk.length >= LINES_PER_WRITE) {
      process.stdout.write(`${chunk.join('\n')}\n`);
      chunk = [];
    }
  }
  if (chunk.length > 0) process.stdout.write(`${chunk.join('\n')}\n`);
}
