import type { RunSettings } from '../../runner/group.js';

/** Quote a string for bash as one word. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/** Inputs of a wrapper script: what one array element runs. */
export interface WrapperSpec {
  /** The scheduler's array index variable, e.g. SLURM_ARRAY_TASK_ID or SGE_TASK_ID. */
  indexVar: string;
  /** Absolute paths of node and of the drover entry script. */
  node: string;
  bin: string;
  /** The launch file the runner reads its group from. */
  launchFile: string;
  /** The backend's config section: header, footer, venv, conda, modules. */
  config: Record<string, string>;
  settings: Pick<RunSettings, 'venv'>;
  /**
   * Elements of one task each run the light single-task runner (src/runner/single.ts) instead of Node: its
   * script, task table and DROVER_S_* settings.
   */
  single?: { script: string; table: string; env: Record<string, string> };
  /**
   * `--signal`'s name (`USR1`): the scheduler sends it to the batch shell (Slurm's `--signal=B:`), which then
   * runs the runner in the background and relays it as SIGUSR2 (drover runner warns its tasks on it).
   */
  relay?: string;
  /**
   * The scheduler sends SIGTERM to every process of the element (Slurm's stop: scancel, time limit, requeue,
   * preemption) and kills what is left once the batch shell exits: the shell then waits for drover's runner, which
   * stops its tasks and records how they ended, instead of dying on the signal and taking the runner with it.
   */
  outlastTerm?: boolean;
  /**
   * What the script runs when the runner exits RUN_ELEMENT_AGAIN (99: the element's time is up and its tasks go on
   * in its next run, `--requeue`): Slurm's `scontrol requeue "$SLURM_JOB_ID"`. Grid Engine needs none: a job that
   * exits 99 is rescheduled.
   */
  runAgain?: string;
}

/**
 * The batch script every array element of a cluster launch runs. Its first argument is the submission's
 * offset (group key = offset + array index). The configured header, environment activation and footer run once
 * per element, around the runner; the tasks' commands are in the launch file, never in this script.
 */
export function wrapperScript(w: WrapperSpec): string {
  const lines = ['#!/bin/bash', '# Written by drover: runs one array element of a launch.', 'set -u'];
  // The warning's trap comes first: Slurm may send it from the element's first second (its timer has a
  // resolution of up to a minute), and bash dies of a USR1 it does not trap, header or not.
  const relaying = w.relay !== undefined && !w.single;
  if (relaying) lines.push(...relayTrap(w.relay!));
  if (w.config.modules)
    lines.push(`module load ${w.config.modules.split(/\s+/).filter(Boolean).map(shellQuote).join(' ')}`);
  if (w.config.conda) lines.push(`conda activate ${shellQuote(w.config.conda)}`);
  const venv = w.settings.venv ?? w.config.venv;
  if (venv) lines.push(`source ${shellQuote(`${venv}/bin/activate`)}`);
  if (w.config.header) lines.push(w.config.header);
  lines.push(`drover_group=$(( \${1:-0} + \${${w.indexVar}} ))`);
  if (w.single) {
    for (const [k, v] of Object.entries(w.single.env)) lines.push(`export ${k}=${shellQuote(v)}`);
    lines.push(`perl ${shellQuote(w.single.script)} ${shellQuote(w.single.table)} "$drover_group"`);
  } else {
    const runner = `${shellQuote(w.node)} ${shellQuote(w.bin)} runner ${shellQuote(w.launchFile)} --group "$drover_group"`;
    if (relaying || w.outlastTerm) lines.push(...relayed(runner, relaying, w.outlastTerm === true));
    else lines.push(runner);
  }
  if ((w.relay === undefined && !w.outlastTerm) || w.single) lines.push('drover_status=$?');
  if (w.runAgain !== undefined && !w.single)
    lines.push(`if [ "$drover_status" = 99 ]; then ${w.runAgain}; fi`);
  if (w.config.footer) lines.push(w.config.footer);
  lines.push('exit $drover_status', '');
  return lines.join('\n');
}

/**
 * The trap of the warning signal `name` (checked by util/warn-signal.ts: letters and digits), set before anything
 * else runs: it goes to the runner as SIGUSR2 once the runner catches SIGUSR2 (SigCgt in /proc: Node dies of one
 * that comes before its handler, and a warning can come before the runner even starts). `drover_relay` waits
 * for that in the background, up to a minute; where /proc cannot say, the runner's own timer warns its tasks.
 */
function relayTrap(name: string): string[] {
  if (!/^[A-Z0-9]+$/.test(name)) throw new Error(`not a signal name: ${name}`);
  return [
    'drover_runner=',
    'drover_warned=',
    'drover_relay() {',
    '  [ -n "$drover_runner" ] || return 0',
    '  (',
    '    for ((i = 0; i < 600; i++)); do',
    '      kill -0 "$drover_runner" 2>/dev/null || exit 0',
    "      while IFS=$':\\t ' read -r k v; do",
    '        if [ "$k" = SigCgt ] && [ -n "$v" ] && ((16#$v & 16#800)); then kill -USR2 "$drover_runner"; exit 0; fi',
    '      done <"/proc/$drover_runner/status" 2>/dev/null',
    '      sleep 0.1',
    '    done',
    '  ) &',
    '}',
    `trap 'drover_warned=1; drover_relay' ${name}`,
  ];
}

/**
 * The runner in the background, so that the batch shell runs its traps while the runner runs: with `relay`, a
 * warning that came before it started goes to it now (relayTrap); with `outlastTerm`, SIGTERM (which the runner
 * gets too) only interrupts the wait. Its status is the runner's, waited for again while a trap interrupts the wait.
 */
function relayed(runner: string, relay: boolean, outlastTerm: boolean): string[] {
  return [
    ...(outlastTerm ? ["trap ':' TERM"] : []),
    `${runner} &`,
    'drover_runner=$!',
    ...(relay ? ['if [ -n "$drover_warned" ]; then drover_relay; fi'] : []),
    'wait "$drover_runner"',
    'drover_status=$?',
    'while kill -0 "$drover_runner" 2>/dev/null; do wait "$drover_runner"; drover_status=$?; done',
  ];
}
