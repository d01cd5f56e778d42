/**
 * How a task's command line is executed. A command made only of plain words (no quotes, variables, globs,
 * redirections, operators or shell keywords) is split on spaces and executed directly: the same result as
 * `sh -c`, one exec fewer, which matters for tens of thousands of short tasks. Anything else runs with `/bin/sh -c`.
 */

const PLAIN_WORDS = /^[A-Za-z0-9_./:,+@%=^-]+( +[A-Za-z0-9_./:,+@%=^-]+)*$/;

/** Words a shell treats specially in first position: builtins and keywords that are not (only) programs. */
const SHELL_FIRST_WORDS = new Set([
  '.',
  ':',
  'alias',
  'bg',
  'break',
  'case',
  'cd',
  'command',
  'continue',
  'do',
  'done',
  'elif',
  'else',
  'esac',
  'eval',
  'exec',
  'exit',
  'export',
  'fc',
  'fg',
  'fi',
  'for',
  'function',
  'getopts',
  'hash',
  'if',
  'jobs',
  'local',
  'read',
  'readonly',
  'return',
  'select',
  'set',
  'shift',
  'source',
  'then',
  'times',
  'trap',
  'type',
  'ulimit',
  'umask',
  'unalias',
  'unset',
  'until',
  'wait',
  'while',
]);

/**
 * The argv to execute `command` directly, or null when it needs a shell. Plain words split on spaces; words in
 * single quotes, or in double quotes without `$`, backquotes or backslashes, are taken literally as a shell
 * would (so `sh -c 'kill -9 $$'` runs sh itself, and its fate is the task's, not a wrapper shell's).
 */
export function directArgv(command: string): string[] | null {
  const trimmed = command.trim();
  const words = PLAIN_WORDS.test(trimmed) ? trimmed.split(/ +/) : splitQuoted(trimmed);
  if (!words || words.length === 0) return null;
  const first = words[0]!;
  // `VAR=value cmd` is an assignment, and builtins behave differently from programs of the same name.
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first) || SHELL_FIRST_WORDS.has(first)) return null;
  return words;
}

const BARE = /[A-Za-z0-9_./:,+@%=^-]/;

/** Split words with simple quoting; null at anything only a shell can interpret. */
function splitQuoted(text: string): string[] | null {
  const words: string[] = [];
  let word: string | null = null;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ') {
      if (word !== null) words.push(word);
      word = null;
      i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      word = (word ?? '') + text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      if (end < 0) return null;
      const inner = text.slice(i + 1, end);
      if (/[$`\\]/.test(inner)) return null;
      word = (word ?? '') + inner;
      i = end + 1;
    } else if (BARE.test(c)) {
      word = (word ?? '') + c;
      i++;
    } else {
      return null;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** The argv that runs `command` as a user would in a shell. */
export function commandArgv(command: string): string[] {
  return directArgv(command) ?? ['/bin/sh', '-c', command];
}

/** Wrap `command` with a header and footer script (from config) so the footer runs and the exit code is kept. */
export function wrapCommand(command: string, header?: string, footer?: string): string {
  if (!header && !footer) return command;
  const parts: string[] = [];
  if (header) parts.push(header);
  // In a subshell, so a command that calls `exit` still lets the footer run.
  parts.push(`(\n${command}\n)`, '__drover_status=$?');
  if (footer) parts.push(footer);
  parts.push('exit $__drover_status');
  return parts.join('\n');
}
