import { SIGNAL_NAMES } from './end-state.js';
import type { RunSettings } from './group.js';
import { SCHEDULER_STOP, timeLimitReason, UNKNOWN_STATUS } from './reasons.js';

/**
 * The settings of the programs that run cluster elements without Node (single.pl, element.py, element.sh), as
 * DROVER_S_* variables: the launch's settings, and the words of the exit-status table (end-state.ts) they write
 * in their records, so that no program holds its own copy. The launch's variables for every task
 * (`settings.env`) come with them under their own names. single.pl gets them in its environment; element.py and
 * element.sh read them from a file (settingsFileText).
 */
export function programSettings(settings: RunSettings): Record<string, string> {
  const vars: Record<string, string> = {
    ...settings.env,
    DROVER_S_JOB: settings.job,
    DROVER_S_LAUNCH: String(settings.launch),
    DROVER_S_LOG_DIR: settings.logDir,
    DROVER_S_RECORDS_DIR: settings.recordsDir,
    DROVER_S_CANCEL_DIR: settings.cancelDir,
    DROVER_S_CWD: settings.cwd,
    DROVER_S_SLOTS: String(settings.maxTasks ?? 1),
    DROVER_S_GPUS_PER_TASK: String(settings.gpusPerTask ?? 0),
    DROVER_S_RETRIES: String(settings.retries),
    DROVER_S_RETRY_DELAY: String(settings.retryDelay),
    DROVER_S_KILL_GRACE: String(settings.killGrace),
    DROVER_S_SIGNAL_NAMES: SIGNAL_NAMES.join(' '),
    DROVER_S_REASON_SCHEDULER_STOP: SCHEDULER_STOP,
    DROVER_S_REASON_UNKNOWN_STATUS: UNKNOWN_STATUS,
  };
  // Only the Python element runner writes segments; the bash one and single.pl keep a file per attempt (each
  // record says where its output is, so readers follow either).
  if (settings.logs !== undefined) vars.DROVER_S_LOGS = settings.logs;
  // The element's own limit (--duration), by which the programs set their tasks' DROVER_TIME_LEFT_S and DROVER_DEADLINE.
  // Whole seconds, rounded down (Slurm's --time rounds up): bash counts in whole numbers.
  if (settings.runnerLimit !== undefined)
    vars.DROVER_S_RUNNER_LIMIT = String(Math.floor(settings.runnerLimit));
  if (settings.taskTimeout !== undefined) {
    vars.DROVER_S_TASK_TIMEOUT = String(settings.taskTimeout);
    vars.DROVER_S_REASON_TIME_LIMIT = timeLimitReason(settings.taskTimeout);
  }
  return vars;
}

/**
 * Variables as the settings file of element.py and element.sh: NUL-terminated NAME=VALUE entries, which hold any
 * value (bash reads them with `read -d ''`). A value can hold no NUL, as in an environment.
 */
export function settingsFileText(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([k, v]) => {
      if (`${k}${v}`.includes('\0') || k.includes('=') || k === '')
        throw new Error(`a setting cannot be written: ${JSON.stringify(k)}`);
      return `${k}=${v}\0`;
    })
    .join('');
}
