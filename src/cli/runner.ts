import type { Command } from 'commander';
import { readGroup } from '../runner/group.js';
import { Runner } from '../runner/runner.js';

/** Register `drover runner` (internal): run one group file; used by detached launches and cluster array elements. */
export function registerRunner(program: Command): void {
  program
    .command('runner', { hidden: true })
    .description('internal: run one group of a launch file and record every attempt')
    .argument('<launch-file>', 'the launch file written by drover launch')
    .option('--group <key>', 'the group to run (default: the only one)')
    .action(async (file: string, opts: { group?: string }) => {
      const runner = new Runner(readGroup(file, opts.group));
      let signals = 0;
      const stop = () => {
        if (++signals > 1) process.exit(130);
        runner.terminate();
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      process.on('SIGUSR1', () => runner.checkCancelRequests());
      const summary = await runner.run();
      process.exitCode = Object.entries(summary).every(([s, n]) => s === 'succeeded' || n === 0) ? 0 : 1;
    });
}
