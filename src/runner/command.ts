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

/** The argv to execute `command` directly, or null when it needs a shell. */
export function directArgv(command: string): string[] | null {
  const trimmed = command.trim();
  if (!PLAIN_WORDS.test(trimmed)) return null;
  const words = trimmed.split(/ +/);
  const first = words[0]!;
  // `VAR=value cmd` is an assignment, and builtins behave differently from programs of the same name.
  if (first.includes('=') || SHELL_FIRST_WORDS.has(first)) return null;
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
  parts.push(command, '__drover_status=$?');
  if (footer) parts.push(footer);
  parts.push('exit $__drover_status');
  return parts.join('\n');
}
