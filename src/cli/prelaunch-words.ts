/**
 * The words of `drover prelaunch` (onager's grammar), each with what it does: its help, the man page and shell
 * completion are made from this one list.
 */
export const PRELAUNCH_WORDS: readonly { word: string; usage: string; description: string }[] = [
  { word: '+command', usage: '+command CMD', description: 'the base command of every task' },
  { word: '+jobname', usage: '+jobname NAME', description: 'the job’s name (letters, digits, _ - . +)' },
  {
    word: '+arg',
    usage: '+arg NAME [VALUE...]',
    description: 'an option and its values; several +arg make a grid (earlier ones vary fastest)',
  },
  { word: '+pos-arg', usage: '+pos-arg VALUE...', description: 'a positional argument and its values' },
  { word: '+flag', usage: '+flag FLAG', description: 'a flag, on and off' },
  {
    word: '+tag',
    usage: '+tag [ARG]',
    description: 'pass each task a tag (default option --tag) made of the jobname, number and values',
  },
  { word: '+tag-args', usage: '+tag-args NAME...', description: 'only these +arg names go into the tag' },
  { word: '+no-tag-number', usage: '+no-tag-number', description: 'leave the task number out of tags' },
  {
    word: '+arg-mode',
    usage: '+arg-mode MODE',
    description: 'argparse (--lr 0.1, default) or hydra (lr=0.1)',
  },
  { word: '+jobfile', usage: '+jobfile PATH', description: 'write the jobfile here ({jobname} is replaced)' },
  { word: '+append', usage: '+append, +a', description: 'add the tasks to the job’s existing jobfile' },
  { word: '+quiet', usage: '+quiet, +q', description: 'do not print the commands' },
];

/** The words as help lines: usage padded to one column, then what it does. */
export function prelaunchWordLines(): string {
  return PRELAUNCH_WORDS.map((w) => `  ${w.usage.padEnd(22)}${w.description}`).join('\n');
}
