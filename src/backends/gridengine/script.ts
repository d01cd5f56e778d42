import { DroverError } from '../../errors.js';
import { shellQuote, type WrapperSpec, wrapperScript } from '../cluster/wrapper.js';

/**
 * Grid Engine stops an element by signalling the job script's process group: SIGUSR2 first when the job was
 * submitted with `-notify` (then SIGKILL after the queue's notify time), SIGUSR1 before a suspend, SIGKILL at
 * once without `-notify`. A runner in that group would die without a record (Node's default for SIGUSR2), and
 * tasks, each in its own process group, would outlive a SIGKILL unless the site kills by additional group id.
 * So the runner and its tasks run in a session of their own; this script relays a stop (SIGUSR2, SIGTERM) to
 * the runner as SIGTERM, once — the runner stops its tasks and records them — and a watchdog in the runner's
 * session does the same if this script is killed outright. The script notes when it was stopped (seconds since
 * it started) in `STOPDIR/JOB.INDEX.stop`: reconciliation tells a time limit from a qdel by it.
 */
function traps(stopDir: string): string[] {
  return [
    'drover_pid=',
    'drover_watch=',
    'drover_stopped=',
    'drover_stop() {',
    '  if [ -n "$drover_stopped" ]; then return; fi',
    '  drover_stopped=1',
    `  printf '%s\\n' "$SECONDS" >${shellQuote(stopDir)}/"$JOB_ID.$SGE_TASK_ID.stop" 2>/dev/null`,
    '  if [ -n "$drover_watch" ]; then kill "$drover_watch" 2>/dev/null; drover_watch=; fi',
    '  if [ -n "$drover_pid" ]; then kill -TERM "$drover_pid" 2>/dev/null; drover_pid=; fi',
    '}',
    'trap : USR1',
    'trap drover_stop USR2 TERM INT',
  ];
}

/** The lines that start the runner (given its command line) in its own session and wait for it. */
function relayed(runner: string): string[] {
  return [
    'if [ -n "$drover_stopped" ]; then exit 143; fi',
    'drover_setsid=$(command -v setsid || true)',
    `$drover_setsid ${runner} &`,
    'drover_runner=$!',
    'drover_pid=$drover_runner',
    '$drover_setsid sh -c \'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 2; done;' +
      ' kill -0 "$2" 2>/dev/null && kill -TERM "$2"\' drover-watch $$ "$drover_runner" </dev/null >/dev/null 2>&1 &',
    'drover_watch=$!',
    'while :; do',
    '  wait "$drover_runner"',
    '  drover_status=$?',
    '  kill -0 "$drover_runner" 2>/dev/null || break',
    'done',
    'if [ -n "$drover_watch" ]; then kill "$drover_watch" 2>/dev/null; fi',
  ];
}

/**
 * The script every array element of a Grid Engine launch runs: the shared wrapper (environment, header,
 * footer, group key = $1 + SGE_TASK_ID, the runner) with the runner started as described above.
 */
export function elementScript(spec: Omit<WrapperSpec, 'indexVar'>, stopDir: string): string {
  const lines = wrapperScript({ ...spec, indexVar: 'SGE_TASK_ID' }).split('\n');
  const set = lines.indexOf('set -u');
  const group = lines.findIndex((l) => l.startsWith('drover_group='));
  const status = lines.indexOf('drover_status=$?');
  if (set < 0 || group < 0 || status < group + 2) {
    throw new DroverError(
      'internal',
      'the cluster wrapper script changed shape: update gridengine/script.ts',
    );
  }
  // The line before `drover_status=$?` starts the runner (drover runner, or the single-task runner).
  lines.splice(status - 1, 2, ...relayed(lines[status - 1]!));
  lines.splice(set + 1, 0, ...traps(stopDir));
  return lines.join('\n');
}
