import { Command, CommanderError } from 'commander';
import { registerCancel } from './cancel.js';
import { registerCompletion } from './completion.js';
import { registerConfig } from './config.js';
import { addExamples } from './examples.js';
import { registerHistory } from './history.js';
import { registerLaunch } from './launch.js';
import { registerList } from './list.js';
import { registerLogs } from './logs.js';
import { handleProcessErrors, reportError } from './output.js';
import { registerPool } from './pool.js';
import { registerPrelaunch } from './prelaunch.js';
import { registerResults } from './results.js';
import { registerRunner } from './runner.js';
import { self } from './self.js';
import { registerServer } from './server.js';
import { registerStatus } from './status.js';
import { registerWorker } from './worker.js';

/** Build the `drover` command line. */
export function buildProgram(version: string): Command {
  const program = new Command('drover')
    .description(
      'Launch experiment sweeps and batch jobs, and keep an honest record of every attempt.\n' +
        'Data lives in .drover/ of the folder you work in.',
    )
    .version(version, '-V, --version')
    // drover's own options come before the command: `drover prelaunch ... +flag --version` and
    // `drover launch --command --version` pass those words on as the user's, never as a version request.
    .enablePositionalOptions()
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  registerPrelaunch(program);
  registerLaunch(program);
  registerStatus(program);
  registerList(program);
  registerResults(program);
  registerLogs(program);
  registerCancel(program);
  registerHistory(program);
  registerConfig(program);
  registerRunner(program);
  registerServer(program);
  registerPool(program);
  registerWorker(program);
  registerCompletion(program);
  addExamples(program);
  program.addHelpText('after', '\nExit codes: 0 success, 1 the work failed, 2 bad usage or input.');
  for (const cmd of program.commands) cmd.exitOverride().configureOutput({ outputError: () => {} });
  return program;
}

/** Run the CLI with `argv` (the arguments after `drover`). */
export async function main(argv: string[], facts: { version: string; bin: string }): Promise<void> {
  Object.assign(self, facts);
  handleProcessErrors();
  const program = buildProgram(facts.version);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      ) {
        process.exitCode = 0;
        return;
      }
      // One line, whatever the user typed: control characters (a newline in an unknown option) are escaped.
      const msg = err.message
        .replace(/^error: /, '')
        .replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
      process.stderr.write(`drover: ${msg} (see drover --help)\n`);
      process.exitCode = 2;
      return;
    }
    process.exitCode = reportError(err);
  }
}
