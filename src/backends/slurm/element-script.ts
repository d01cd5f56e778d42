import path from 'node:path';
import { writeFileAtomic } from '../../files.js';
import { directArgv } from '../../runner/command.js';
import type { GroupTask, RunSettings } from '../../runner/group.js';
import { programSettings, settingsFileText } from '../../runner/program-settings.js';
import { writeProgram } from '../../runner/programs.js';

/**
 * The element runners of Slurm launches: drover's runner in bash (runner/programs/element.sh) and, for packed
 * elements on nodes with Python 3.8 or later, in Python (runner/programs/element.py). They spare each array
 * element the start of Node (~0.1-0.3 CPU-second). Launches they cannot serve (retries, per-task time limits, per-task
 * variables) run `drover runner` instead. This module writes what they read: the programs, the task table and the
 * settings file, into the launch folder.
 */

/**
 * Can the element runner run these tasks of a launch? Not with retries, time limits, `--signal`, `--requeue` or
 * task variables.
 */
export function elementRunnerFits(settings: RunSettings, tasks: readonly GroupTask[]): boolean {
  if (
    settings.retries !== 0 ||
    settings.taskTimeout !== undefined ||
    settings.warnSignal !== undefined ||
    settings.requeue !== undefined
  )
    return false;
  return !tasks.some((t) => t.env && Object.keys(t.env).length > 0);
}

/** A string as a bash ANSI-C quoted word (`$'...'`) on one line, whatever it holds. */
export function ansiQuote(s: string): string {
  let out = "$'";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}

/** One line of the task table: `ATTEMPT ID D WORD...` (executed directly) or `ATTEMPT ID S COMMAND` (sh -c). */
function tableLine(t: GroupTask): string {
  const argv = directArgv(t.command);
  return argv
    ? `${t.attempt} ${t.id} D ${argv.map(ansiQuote).join(' ')}`
    : `${t.attempt} ${t.id} S ${ansiQuote(t.command)}`;
}

/**
 * The task table the element runner reads, one task per line, words ANSI-C quoted, so that a group's lines are
 * found by their numbers alone. One task per element: line K holds task K (the group key is the task id; lines
 * of tasks not in the launch are empty). Packed: the tasks in launch order, so group K is lines (K-1)*N+1 to K*N.
 */
export function elementTable(tasks: readonly GroupTask[], tasksPerNode: number): string {
  if (tasksPerNode > 1) return `${tasks.map(tableLine).join('\n')}\n`;
  const max = tasks.reduce((m, t) => Math.max(m, t.id), 0);
  const lines: string[] = new Array(max).fill('');
  for (const t of tasks) lines[t.id - 1] = tableLine(t);
  return `${lines.join('\n')}\n`;
}

/** What the element runner runs: a launch's settings and tasks, and how they are grouped. */
export interface ElementRunnerSpec {
  settings: RunSettings;
  tasks: readonly GroupTask[];
  /** Tasks per element (1: one task per element; its group key is the task id). */
  tasksPerNode: number;
  /** `drover runner`, for bash older than 5.1 (no `wait -n -p`): node and drover's entry script. */
  node: string;
  bin: string;
}

/**
 * Write the element runner of a launch into its folder: `slurm-element.sh` with its settings beside it
 * (`slurm-element.settings`), the task table `slurm-tasks.txt`, and for packed elements `slurm-element.py` with
 * `drover_common.py`. Returns the script; it takes a runner's arguments (`runner LAUNCH_FILE --group KEY`), and
 * the Slurm wrapper sources it (one bash per element) where it would run `node drover.cjs runner ...`.
 */
export function writeElementRunner(dir: string, spec: ElementRunnerSpec): string {
  const table = path.join(dir, 'slurm-tasks.txt');
  const script = path.join(dir, 'slurm-element.sh');
  const per = Math.max(1, spec.tasksPerNode);
  writeFileAtomic(table, elementTable(spec.tasks, per));
  const vars: Record<string, string> = {
    ...programSettings(spec.settings),
    DROVER_S_TABLE: table,
    DROVER_S_PER: String(per),
    DROVER_S_NODE: spec.node,
    DROVER_S_BIN: spec.bin,
    DROVER_S_ELEMENT_SH: script,
  };
  if (per > 1) {
    vars.DROVER_S_PYTHON = path.join(dir, 'slurm-element.py');
    writeProgram('element.py', vars.DROVER_S_PYTHON);
    writeProgram('drover_common.py', path.join(dir, 'drover_common.py'));
  }
  writeFileAtomic(path.join(dir, 'slurm-element.settings'), settingsFileText(vars));
  writeProgram('element.sh', script);
  return script;
}
