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
}

/**
 * The batch script every array element of a cluster launch runs. Its first argument is the submission's
 * offset (group key = offset + array index). The configured header, environment activation and footer run once
 * per element, around the runner; the tasks' commands are in the launch file, never in this script.
 */
export function wrapperScript(w: WrapperSpec): string {
  const lines = ['#!/bin/bash', '# Written by drover: runs one array element of a launch.', 'set -u'];
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
    lines.push(
      `${shellQuote(w.node)} ${shellQuote(w.bin)} runner ${shellQuote(w.launchFile)} --group "$drover_group"`,
    );
  }
  lines.push('drover_status=$?');
  if (w.config.footer) lines.push(w.config.footer);
  lines.push('exit $drover_status', '');
  return lines.join('\n');
}
