import type { CommandNode } from './cli-tree.js';
import { allCommands } from './cli-tree.js';
import { EXAMPLES } from './examples.js';

/**
 * drover(1), made at build time from the command line's own definitions (cli-tree.ts) and the examples table,
 * so the man page says what `--help` says.
 */

/** Text as roff: backslashes and hyphens escaped, other than ASCII as `\[uXXXX]`, a leading dot or quote made literal. */
export function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/[^\x00-\x7f]/gu, (c) => `\\[u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`)
    .split('\n')
    .map((l) => (/^[.']/.test(l) ? `\\&${l}` : l))
    .join('\n');
}

const words = (c: CommandNode) => (c.path.length === 0 ? [] : [...c.path.slice(1), c.name]);

/** The man page of `tree` (the drover program), for `version`. */
export function manPage(tree: CommandNode, version: string): string {
  const out: string[] = [
    `.TH DROVER 1 "" "drover ${roff(version)}" "User Commands"`,
    '.SH NAME',
    `drover \\- ${roff(tree.description.split('\n')[0] ?? '')}`,
    '.SH SYNOPSIS',
    '.B drover',
    '.I command',
    '[\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    roff(tree.description),
    '.PP',
    'Data goes to stdout (a table, or JSON with \\fB\\-\\-json\\fR); progress and messages go to stderr.',
    'Every command has \\fB\\-\\-help\\fR.',
    '.SH COMMANDS',
  ];
  for (const c of allCommands(tree).slice(1)) {
    const name = ['drover', ...words(c)].join(' ');
    out.push(`.SS "${roff(name)} ${roff(c.usage)}"`, roff(c.description));
    for (const w of c.plusWords ?? []) out.push('.TP', `.B ${roff(w.usage ?? w.word)}`, roff(w.description));
    for (const o of c.options.filter((o) => o.long !== '--help'))
      out.push('.TP', `.B ${roff(o.flags)}`, roff(o.description));
    const examples = EXAMPLES[words(c).join(' ')];
    if (examples) {
      out.push('.PP', 'Examples:', '.RS', '.nf');
      for (const e of examples) out.push(roff(e));
      out.push('.fi', '.RE');
    }
  }
  out.push(
    '.SH EXAMPLES',
    '.nf',
    ...(EXAMPLES[''] ?? []).map(roff),
    '.fi',
    '.SH EXIT STATUS',
    '.TP',
    '.B 0',
    'success',
    '.TP',
    '.B 1',
    'the work failed (a foreground local launch with failed tasks)',
    '.TP',
    '.B 2',
    'bad usage or bad input: one line on stderr names the bad value; nothing is written',
    '.SH FILES',
    '.TP',
    '.B .drover/',
    'in the folder you work in (\\fBDROVER_DIR\\fR moves it): the ledger \\fIledger.db\\fR, jobfiles',
    '\\fIjobs/J/jobs.json\\fR (onager\\(aqs format), launch folders \\fIjobs/J/launches/N/\\fR and task logs',
    '\\fIlogs/J/N/\\fR (segments \\fIRUNNER.SLOT.out\\fR, \\fI.err\\fR, \\fI.idx\\fR, or with \\fB--logs files\\fR',
    '\\fITASK.ATTEMPT.out\\fR and \\fI.err\\fR).',
    '.SH ENVIRONMENT',
    '.TP',
    '.B DROVER_DIR',
    'where drover keeps its data (default: \\fI.drover\\fR in the current folder).',
    '.SH SEE ALSO',
    'The documentation in the \\fIdocs/\\fR folder of drover\\(aqs repository, onager, GNU parallel, sbatch(1), qsub(1).',
  );
  return `${out.join('\n')}\n`;
}
