import { PRELAUNCH_OPTIONS } from '../sweep/prelaunch-options.js';

/**
 * The words of `drover prelaunch` (onager's grammar, and +commands-file), each with what it does, from the
 * parser's own table: its help, the man page and shell completion are made from it.
 */
export const PRELAUNCH_WORDS: readonly { word: string; usage: string; description: string }[] =
  PRELAUNCH_OPTIONS.filter((o) => o.key !== 'help').map((o) => ({
    word: o.names[0]!,
    usage: o.usage,
    description: o.description,
  }));

/** The words as help lines: usage padded to one column, then what it does. */
export function prelaunchWordLines(): string {
  return PRELAUNCH_WORDS.map((w) => `  ${w.usage.padEnd(22)}${w.description}`).join('\n');
}
