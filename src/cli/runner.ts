import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { ingestWhileRunning } from '../backends/local/ingest-loop.js';
import { ingestLaunch } from '../ledger/ingest.js';
import { getLaunch, type LaunchRow } from '../ledger/launches.js';
import { Ledger } from '../ledger/ledger.js';
import { droverPaths } from '../paths.js';
import { readGroup } from '../runner/group.js';
import { RUN_ELEMENT_AGAIN } from '../runner/reasons.js';
import { earlierRunsGone } from '../runner/restart.js';
import { Runner } from '../runner/runner.js';

/**
 * How long the last ingest, after the last task, waits for a busy ledger: no task waits on it then, but the
 * runner's process lingers while it does, and the next `drover status` ingests what it could not.
 */
const FINAL_WAIT_MS = 2_000;

/**
 * The ledger of a detached local launch, opened by its runner to keep it current (see ingestWhileRunning).
 * Undefined, with one line on stderr (runner.log), when it cannot be — the folder is gone, or its ledger is not
 * the one that made this launch (no launch of that number, or one in another folder): the launch runs all the
 * same, and `drover status` ingests its records as it would a cluster launch's.
 */
function ledgerToKeep(
  droverDir: string,
  launchId: number,
  launchFile: string,
): { ledger: Ledger; launch: LaunchRow } | undefined {
  const paths = droverPaths(droverDir);
  let ledger: Ledger | undefined;
  try {
    // Never make a new ledger: one removed since the launch is not ours to recreate.
    if (!fs.existsSync(paths.ledger)) throw new Error(`${paths.ledger} does not exist`);
    ledger = Ledger.open(paths);
    const launch = getLaunch(ledger, launchId);
    if (!launch) throw new Error(`the ledger has no launch ${launchId}`);
    const here = path.dirname(path.resolve(launchFile));
    if (path.resolve(launch.dir) !== here)
      throw new Error(`the ledger's launch ${launchId} is in ${launch.dir}, not ${here}`);
    return { ledger, launch };
  } catch (err) {
    ledger?.close();
    process.stderr.write(
      `drover runner: not keeping the ledger current (${err instanceof Error ? err.message : String(err)}): drover status will ingest this launch's records\n`,
    );
    return undefined;
  }
}

/** The last ingest, once the runner's records are all written; then the ledger is closed. */
function ingestLast(kept: { ledger: Ledger; launch: LaunchRow }): void {
  try {
    kept.ledger.setBusyTimeout(FINAL_WAIT_MS);
    ingestLaunch(kept.ledger, kept.launch);
  } catch {
    // Left for the next drover status.
  } finally {
    kept.ledger.close();
  }
}

/** Wait for the line `go` on stdin: false if stdin ends without it (the launching CLI died first). */
function waitForGo(): Promise<boolean> {
  return new Promise((resolve) => {
    let text = '';
    const done = (go: boolean) => {
      process.stdin.removeAllListeners('data');
      process.stdin.destroy();
      resolve(go);
    };
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (d: string) => {
      text += d;
      if (text.includes('go\n')) done(true);
    });
    process.stdin.once('end', () => done(text.includes('go\n')));
    process.stdin.once('error', () => done(false));
  });
}

/** Register `drover runner` (internal): run one group file; used by detached launches and cluster array elements. */
export function registerRunner(program: Command): void {
  program
    .command('runner', { hidden: true })
    .description('internal: run one group of a launch file and record every attempt')
    .argument('<launch-file>', 'the launch file written by drover launch')
    .option('--group <key>', 'the group to run (default: the only one)')
    .option('--wait-for-go', 'start only after reading the line `go` on stdin; run nothing if it never comes')
    .option(
      '--ingest-into <drover-dir>',
      "keep this .drover folder's ledger current with the records, as a foreground launch does (local launches only: the ledger must be on this host)",
    )
    .action(async (file: string, opts: { group?: string; waitForGo?: boolean; ingestInto?: string }) => {
      if (opts.waitForGo && !(await waitForGo())) return;
      const group = readGroup(file, opts.group);
      // An element the scheduler ran again goes on once its earlier run's runner is gone (runner/restart.ts).
      if (group.termState === 'killed' && !(await earlierRunsGone(group))) {
        process.exitCode = 1;
        return;
      }
      const kept =
        opts.ingestInto !== undefined ? ledgerToKeep(opts.ingestInto, group.launch, file) : undefined;
      const runner = new Runner(group);
      // A first signal stops the tasks (TERM, KILL after the grace), a second kills them at once; both are
      // recorded. A third exits without waiting for their records.
      let signals = 0;
      const stop = () => {
        signals++;
        if (signals === 1) runner.terminate();
        else if (signals === 2) runner.abort();
        else process.exit(130);
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      process.on('SIGHUP', stop);
      process.on('SIGUSR1', () => runner.checkCancelRequests());
      // A cluster element's batch script relays the scheduler's warning (--signal) as SIGUSR2.
      if (group.warnSignal !== undefined && group.runnerLimit !== undefined)
        process.on('SIGUSR2', () => runner.warnTasks());
      const stopIngesting = kept && ingestWhileRunning(kept.ledger, kept.launch);
      const summary = await runner.run();
      stopIngesting?.();
      if (kept) ingestLast(kept);
      // Its element's time came first (--requeue): the element is to run again, where its tasks go on.
      if (runner.runsAgain) process.exitCode = RUN_ELEMENT_AGAIN;
      else process.exitCode = Object.entries(summary).every(([s, n]) => s === 'succeeded' || n === 0) ? 0 : 1;
    });
}
