/**
 * A user's value as a one-line message shows it: in single quotes, control characters escaped (`\n`, `\u001b`),
 * and cut to `max` characters with `...` (a 100 KB tasklist stays readable, a newline never splits the line).
 */
export function quoted(text: string, max = 80): string {
  const escaped = text.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
  return `'${escaped.length > max ? `${escaped.slice(0, max - 3)}...` : escaped}'`;
}
