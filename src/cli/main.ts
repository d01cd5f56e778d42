import { Command, CommanderError } from 'commander';
import { registerCancel } from './cancel.js';
import { refuseColour } from './colour.js';
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
import { registerUi } from './ui.js';
import { registerWatch } from './watch.js';
import { registerWorker } from './worker.js';

/** Each command, by name, with what registers it, in the order `drover --help` lists them. */
const COMMANDS: readonly (readonly [string, (program: Command) => void])[] = [
  ['prelaunch', registerPrelaunch],
  ['launch', registerLaunch],
  ['status', registerStatus],
  ['watch', registerWatch],
  ['list', registerList],
  ['results', registerResults],
  ['logs', registerLogs],
  ['cancel', registerCancel],
  ['history', registerHistory],
  ['config', registerConfig],
  ['runner', registerRunner],
  ['server', registerServer],
  ['ui', registerUi],
  ['pool', registerPool],
  ['worker', registerWorker],
  ['completion', registerCompletion],
];

/**
 * Build the `drover` command line; with `only`, with that command alone (what running it needs: its options,
 * help and examples are the same; a fifth of the time of building all sixteen, at every start).
 */
export function buildProgram(version: string, only?: string): Command {
  const program = new Command('drover')
    .description(
      'Launch experiment sweeps and batch jobs, and keep an honest record of every attempt.\n' +
        'Data lives in .drover/ of the folder you work in.',
    )
    .version(version, '-V, --version')
    // drover's own options come before the command: `drover prelaunch ... +flag --version` and
    // `drover launch --command --version` pass those words on as the user's, never as a version request.
    .enablePositionalOptions()
    .option('--no-color', 'no colours (also with NO_COLOR set, or when output is not a terminal)')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  for (const [name, register] of COMMANDS) if (only === undefined || name === only) register(program);
  addExamples(program);
  // `drover --no-color CMD` or `drover CMD --no-color` (every command takes it: see below).
  program.hook('preAction', (_root, action) => {
    if (program.opts().color === false || action.opts().color === false) refuseColour();
  });
  program.addHelpText('after', '\nExit codes: 0 success, 1 the work failed, 2 bad usage or input.');
  for (const cmd of program.commands) cmd.exitOverride().configureOutput({ outputError: () => {} });
  for (const name of ['launch', 'status', 'list', 'results']) {
    program.commands
      .find((c) => c.name() === name)
      ?.option('--no-color', 'no colours (also NO_COLOR, or piped)');
  }
  return program;
}

/** Run the CLI with `argv` (the arguments after `drover`) as this process's one command. */
export async function main(argv: string[], facts: { version: string; bin: string }): Promise<void> {
  handleProcessErrors();
  await runCommand(argv, facts);
}

/**
 * Run one command: what `main` does without taking over the process's uncaught errors and output failures, which
 * stay with whoever runs it (the tests' in-process twin of the CLI). Its exit code is left in `process.exitCode`.
 */
export async function runCommand(argv: string[], facts: { version: string; bin: string }): Promise<void> {
  Object.assign(self, facts);
  // A known command as the first word builds that command alone; anything else (help, an unknown word that
  // gets a suggestion, an option for drover itself) builds them all, and so does `completion`, which prints them.
  const alone = argv[0] !== 'completion' && COMMANDS.some(([name]) => name === argv[0]);
  const program = buildProgram(facts.version, alone ? argv[0] : undefined);
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
