import type { Command } from 'commander';
import { readGroup } from '../runner/group.js';
import { Runner } from '../runner/runner.js';

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
    .action(async (file: string, opts: { group?: string; waitForGo?: boolean }) => {
      if (opts.waitForGo && !(await waitForGo())) return;
      const runner = new Runner(readGroup(file, opts.group));
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
      const summary = await runner.run();
      process.exitCode = Object.entries(summary).every(([s, n]) => s === 'succeeded' || n === 0) ? 0 : 1;
    });
}
