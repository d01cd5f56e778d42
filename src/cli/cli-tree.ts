import type { Command } from 'commander';

/**
 * The command line as data, read from commander's own definitions (what `--help` prints), so that shell
 * completion and the man page are generated from the same place as the help and never drift from it.
 */

/** One option of a command. */
export interface OptionNode {
  /** As in the help: `-n, --lines <n>`. */
  flags: string;
  /** `--lines` (every drover option has a long name). */
  long: string;
  /** `-n`, if it has a short name. */
  short?: string;
  /** Whether it takes a value (`<v>` or `[v]`). */
  takesValue: boolean;
  /** Whether its value is a job name (`--jobname <job>`, `--after <job>`...): completion offers the jobs. */
  valueIsJob: boolean;
  /** The values it accepts, when it lists them (`--backend local|slurm|...`). */
  choices?: readonly string[];
  description: string;
}

/** One command (or the program itself), with its subcommands. */
export interface CommandNode {
  /** `status`; the program's own node is named `drover`. */
  name: string;
  /** The words before it: `[]` for drover, `['drover', 'pool']` for `pool create`. */
  path: string[];
  /** Usage after the name, as the help prints it: `[options] [job]`. */
  usage: string;
  description: string;
  /** Whether its first positional argument is a job (`status [job]`, `logs <job> <task>`). */
  jobArgument: boolean;
  /** The + words of a command that takes them (prelaunch), with what each does. */
  plusWords?: readonly PlusWord[];
  options: OptionNode[];
  commands: CommandNode[];
  /** Text the help prints after the options (examples, notes). */
  after?: string;
}

/** A word of a command's own grammar (prelaunch's `+arg`), with its usage and what it does. */
export interface PlusWord {
  word: string;
  /** `+arg NAME [VALUE...]` (default: the word). */
  usage?: string;
  description: string;
}

/** Extra words a command's help does not hold as commander options (prelaunch's onager grammar), by command. */
export type PlusWords = Record<string, readonly PlusWord[]>;

/** The tree of `program`'s visible commands and options. */
export function cliTree(program: Command, plus: PlusWords = {}, path: string[] = []): CommandNode {
  const help = program.createHelp();
  const name = program.name();
  // Every argument, described or not (the help shows only described ones).
  const args = program.registeredArguments;
  const node: CommandNode = {
    name,
    path,
    usage: program.usage(),
    description: help.commandDescription(program),
    jobArgument: args.length > 0 && /^job/.test(args[0]!.name()),
    options: help.visibleOptions(program).map((o) => ({
      flags: o.flags,
      long: o.long ?? o.short ?? o.flags,
      ...(o.short ? { short: o.short } : {}),
      takesValue: o.required || o.optional,
      valueIsJob: o.long === '--jobname' || /<job>|\[job\]/.test(o.flags),
      ...(o.argChoices ? { choices: o.argChoices } : {}),
      description: o.description,
    })),
    commands: [],
  };
  const words = plus[[...path, name].slice(1).join(' ')];
  if (words) node.plusWords = words;
  node.commands = help
    .visibleCommands(program)
    .filter((c) => c.name() !== 'help')
    .map((c) => cliTree(c, plus, [...path, name]));
  return node;
}

/** Every command of the tree, depth first, the program first. */
export function allCommands(tree: CommandNode): CommandNode[] {
  return [tree, ...tree.commands.flatMap(allCommands)];
}
