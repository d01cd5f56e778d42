/**
 * Answers of scheduler commands (squeue, sacct, qstat, qacct, ...) are believed only whole. A command can exit 0
 * with an answer cut short (a pipe closed early, a daemon that died while answering) or with text of another
 * kind; a parser that took what it could read would make elements it missed look gone, and drover would judge
 * their tasks lost. So every parser of scheduler output says either what the whole answer holds or that it
 * could not read it, and a caller treats an unreadable answer as one it did not get.
 */

/** What a parser made of a scheduler's answer: all of it, or why it is not a whole answer. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; why: string };

/** A whole answer's value. */
export function whole<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

/** An answer that is not whole, and why. */
export function unreadable<T>(why: string): Parsed<T> {
  return { ok: false, why };
}

/**
 * The lines of a line-oriented answer without its final newline, or why it is not whole: text that does not end
 * with a newline was cut inside its last line. Empty text is a whole answer of no lines.
 */
export function completeLines(text: string): Parsed<string[]> {
  if (text === '') return whole([]);
  if (!text.endsWith('\n')) return unreadable('it ends inside a line');
  return whole(text.slice(0, -1).split('\n'));
}

/** The warning given once per command when a scheduler's answer could not be read whole. */
export function unreadableWarning(command: string, why: string, consequence: string): string {
  return `${command} gave an answer drover cannot read whole (${why}): ${consequence}`;
}
