/** How an option name is joined to its value: `--lr 0.1` (argparse) or `lr=0.1` (hydra). */
export type ArgMode = 'argparse' | 'hydra';

/** One `+arg NAME [VALUES...]` as written on the command line. */
export interface SweepArg {
  /** The option name exactly as given, e.g. `--lr` or `optimizer.lr`. */
  name: string;
  /** Zero or more mutually exclusive values; none means the name is always passed alone. */
  values: string[];
}

/**
 * A parsed `drover prelaunch` command line: onager's `+` grammar, one field per option.
 * Repeated single-value options keep the last one given, as argparse does.
 */
export interface PrelaunchSpec {
  /** `+command`: the base command every task starts with (`''` with `+commands-file`). */
  command: string;
  /** `+commands-file`: a file of whole commands, one per line (`-`: standard input), instead of a sweep. */
  commandsFile?: string;
  /** `+jobname`: the job's name, already validated (see `validateJobname`). */
  jobname: string;
  /** `+jobfile`: a path template where `{jobname}` is replaced; undefined means the default jobfile. */
  jobfile?: string;
  /** `+arg-mode`: `argparse` (default) or `hydra`. */
  argMode: ArgMode;
  /** `+arg`, in the order given (duplicates are resolved by `expandSweep` as onager does). */
  args: SweepArg[];
  /** `+pos-arg`: each entry is one positional slot with its alternative values. */
  posArgs: string[][];
  /** `+flag`: flags toggled on and off, in the order given. */
  flags: string[];
  /** `+tag [ARG]`: the option the tag is passed with (`--tag` when bare); undefined means no tags. */
  tag?: string;
  /** `+tag-args`: the `+arg` names that go into the tag; undefined means all of them. */
  tagArgs?: string[];
  /** `+no-tag-number`: leave the task number out of tags. */
  noTagNumber: boolean;
  /** `+append` / `+a`: add the tasks to the existing jobfile after its highest id. */
  append: boolean;
  /** `+quiet` / `+q`: don't print the generated commands. */
  quiet: boolean;
}

/** The part of a spec that decides the commands and tags. */
export type SweepSpec = Pick<
  PrelaunchSpec,
  'command' | 'jobname' | 'argMode' | 'args' | 'posArgs' | 'flags' | 'tag' | 'tagArgs' | 'noTagNumber'
>;

/** One generated task: its id in the jobfile, the command to run and its tag (`''` without `+tag`). */
export interface SweepTask {
  /** Task id, counted from `startId` (1 for a new job). */
  id: number;
  /** The full command line. */
  command: string;
  /** The tag passed to the command, or `''` when the sweep has no `+tag`. */
  tag: string;
  /**
   * The sweep values that made it: `--lr` → `0.1` (hydra: `lr` → `0.1`), `pos1` → the first `+pos-arg`'s value,
   * a `+flag` → `'true'` or `'false'`. A `+arg` given without values is no sweep value and has no key.
   */
  params: Record<string, string>;
}

/** One jobfile record: onager stores it as `["<command>", "<tag>"]` under the task id. */
export interface JobEntry {
  /** The full command line. */
  command: string;
  /** The task's tag, `''` when untagged. */
  tag: string;
}
