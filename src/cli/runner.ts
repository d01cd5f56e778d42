import type { Command } from 'commander';
import { readGroupFile } from '../runner/group.js';
import { Runner } from '../runner/runner.js';

/** Register `drover runner` (internal): run one group file; used by detached launches and cluster array elements. */
export function registerRunner(program: Command): void {
  program
    .command('runner', { hidden: true })
    .description('internal: run the tasks of a group file and record every attempt')
    .argument('<group-file>', 'the group file written by drover launch')
    .action(async (file: string) => {
      const runner = new Runner(readGroupFile(file));
      let signals = 0;
      const stop = () => {
        if (++signals > 1) process.exit(130);
        runner.cancel('all');
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      process.on('SIGUSR1', () => runner.checkCancelRequests());
      const summary = await runner.run();
      process.exitCode = Object.entries(summary).every(([s, n]) => s === 'succeeded' || n === 0) ? 0 : 1;
    });
}
