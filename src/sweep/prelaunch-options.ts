import { usageError } from '../errors.js';

/** How many values an option takes, in argparse's terms: 0, 1, `?` (0 or 1) or `+` (1 or more). */
export type Arity = 'none' | 'one' | 'optional' | 'many';

/** Which PrelaunchSpec field an option fills (`help` fills none). */
export type OptionKey =
  | 'command'
  | 'jobname'
  | 'jobfile'
  | 'argMode'
  | 'arg'
  | 'posArg'
  | 'flag'
  | 'tag'
  | 'tagArgs'
  | 'noTagNumber'
  | 'append'
  | 'quiet'
  | 'commandsFile'
  | 'help';

/** One option of onager's prelaunch parser (onager/frontend.py). */
export interface OptionDef {
  /** The field it fills. */
  key: OptionKey;
  /** Every spelling, the canonical one first. */
  names: readonly string[];
  /** How many values follow it. */
  arity: Arity;
  /** How it is written with its values, for help: `+arg NAME [VALUE...]`. */
  usage: string;
  /** What it does, for help, the man page and completion. */
  description: string;
}

/** The prelaunch options, as onager declares them (argparse with prefix_chars='+'; help is `+h`/`++help`). */
export const PRELAUNCH_OPTIONS: readonly OptionDef[] = [
  {
    key: 'command',
    names: ['+command'],
    arity: 'one',
    usage: '+command CMD',
    description: 'the base command of every task',
  },
  {
    key: 'jobname',
    names: ['+jobname'],
    arity: 'one',
    usage: '+jobname NAME',
    description: 'the job’s name (letters, digits, _ - . +)',
  },
  {
    key: 'jobfile',
    names: ['+jobfile'],
    arity: 'one',
    usage: '+jobfile PATH',
    description: 'write the jobfile here ({jobname} is replaced)',
  },
  {
    key: 'argMode',
    names: ['+arg-mode'],
    arity: 'one',
    usage: '+arg-mode MODE',
    description: 'argparse (--lr 0.1, default) or hydra (lr=0.1)',
  },
  {
    key: 'arg',
    names: ['+arg'],
    arity: 'many',
    usage: '+arg NAME [VALUE...]',
    description: 'an option and its values; several +arg make a grid (earlier ones vary fastest)',
  },
  {
    key: 'posArg',
    names: ['+pos-arg'],
    arity: 'many',
    usage: '+pos-arg VALUE...',
    description: 'a positional argument and its values',
  },
  { key: 'flag', names: ['+flag'], arity: 'one', usage: '+flag FLAG', description: 'a flag, on and off' },
  {
    key: 'tag',
    names: ['+tag'],
    arity: 'optional',
    usage: '+tag [ARG]',
    description: 'pass each task a tag (default option --tag) made of the jobname, number and values',
  },
  {
    key: 'tagArgs',
    names: ['+tag-args'],
    arity: 'many',
    usage: '+tag-args NAME...',
    description: 'only these +arg names go into the tag',
  },
  {
    key: 'noTagNumber',
    names: ['+no-tag-number'],
    arity: 'none',
    usage: '+no-tag-number',
    description: 'leave the task number out of tags',
  },
  {
    key: 'commandsFile',
    names: ['+commands-file'],
    arity: 'one',
    usage: '+commands-file FILE',
    description:
      'instead of +command and a sweep: one task per line of FILE (- for stdin; blank lines and # comments skipped)',
  },
  {
    key: 'append',
    names: ['+append', '+a'],
    arity: 'none',
    usage: '+append, +a',
    description: 'add the tasks to the job’s existing jobfile',
  },
  {
    key: 'quiet',
    names: ['+quiet', '+q'],
    arity: 'none',
    usage: '+quiet, +q',
    description: 'do not print the commands',
  },
  {
    key: 'help',
    names: ['+h', '+help', '++help'],
    arity: 'none',
    usage: '+help, +h',
    description: 'this help',
  },
];

/** One line of usage, used in error messages and for `+h`. */
export const PRELAUNCH_USAGE =
  'usage: drover prelaunch +command CMD +jobname NAME [+arg NAME [VALUE ...]] [+pos-arg VALUE [VALUE ...]] ' +
  '[+flag FLAG] [+tag [ARG]] [+tag-args NAME [NAME ...]] [+no-tag-number] [+arg-mode argparse|hydra] ' +
  '[+jobfile PATH] [+append] [+quiet]  |  drover prelaunch +commands-file FILE +jobname NAME [+jobfile PATH] ' +
  '[+append] [+quiet]';

const BY_NAME = new Map<string, OptionDef>(
  PRELAUNCH_OPTIONS.flatMap((def) => def.names.map((n) => [n, def])),
);

/** A command-line word: a value, or an option with the value attached by `=` if any. */
export type Token = { kind: 'value' } | { kind: 'option'; def: OptionDef; name: string; inline?: string };

/**
 * Classify one word as argparse does with prefix '+': a word is an option if it names one (or `+name=value`);
 * a lone `+` or a `+...` word with a space is a value; any other `+...` word is an unknown option (an error
 * here, where onager would silently ignore it). Abbreviations are refused, with a suggestion.
 */
export function classifyToken(word: string): Token {
  if (!word.startsWith('+')) return { kind: 'value' };
  const exact = BY_NAME.get(word);
  if (exact) return { kind: 'option', def: exact, name: word };
  if (word.length === 1) return { kind: 'value' };
  const eq = word.indexOf('=');
  if (eq > 0) {
    const head = word.slice(0, eq);
    const def = BY_NAME.get(head);
    if (def) return { kind: 'option', def, name: head, inline: word.slice(eq + 1) };
  }
  if (word.includes(' ')) return { kind: 'value' };
  throw usageError(unknownOptionMessage(word));
}

function unknownOptionMessage(word: string): string {
  const head = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
  const shown = JSON.stringify(word);
  const canonical = PRELAUNCH_OPTIONS.filter((d) => d.key !== 'help').map((d) => d.names[0] ?? '');
  const prefixed = canonical.filter((n) => n.startsWith(head));
  if (prefixed.length > 0) {
    return `unknown prelaunch option ${shown}: write option names in full, e.g. ${prefixed.join(' or ')}`;
  }
  const near = canonical
    .map((n) => ({ n, d: editDistance(head, n) }))
    .filter((c) => c.d <= Math.min(2, Math.floor((head.length - 1) / 3)))
    .sort((a, b) => a.d - b.d)[0];
  if (near) return `unknown prelaunch option ${shown}: did you mean ${near.n}?`;
  return `unknown prelaunch option ${shown} (values cannot start with '+'); options are ${canonical.join(' ')}`;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
