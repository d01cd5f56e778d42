import { usageError } from '../errors.js';
import { MAX_JOB_TASKS } from '../util/limits.js';
import { BATCH_SIZE, emptyBatch, type TaskBatch } from './task-batch.js';
import type { JobEntry, SweepArg, SweepSpec, SweepTask } from './types.js';

/** Separator inside one tag part (`lr_0.1`) and after the jobname (`exp_01`), as onager's SEP. */
const SEP = '_';
/** Separator between tag parts (`exp_1__lr_0.1`), as onager's WSEP. */
const WSEP = '__';

/** Options for expandSweep and planSweep. */
export interface ExpandOptions {
  /** Id of the first new task: 1 for a new job, `nextTaskId(existing)` for `+append`. */
  startId?: number;
}

/** One part of every command, in the command's order: a sweep axis (one of its values per task) or fixed text. */
interface Part {
  /** The text each value adds to the command (one entry for a fixed part). */
  command: string[];
  /** The text each value adds to the tag's suffix. */
  tag: string[];
  /** The axis this part's value comes from, or -1 for a fixed part. */
  axis: number;
}

/** A params key and the axis whose value it records, with the JSON text of its key and of each value. */
interface ParamSlot {
  keyJson: string;
  axis: number;
  valueJson: string[];
}

/**
 * A sweep's tasks, planned but not made: how many there are, and the tasks in order, a batch at a time, each
 * computed from its number alone (a mixed-radix count over the axes), so a sweep of millions of tasks needs
 * memory for one batch. The same commands, tags and params as onager's prelaunch (see expandSweep).
 */
export class SweepPlan {
  /** How many tasks the sweep makes. */
  readonly count: number;
  private readonly sizes: number[];

  constructor(
    /** The sweep it plans. */
    readonly spec: SweepSpec,
    /** Id of the first task. */
    readonly startId: number,
    private readonly parts: readonly Part[],
    private readonly slots: readonly ParamSlot[],
  ) {
    this.sizes = [];
    for (const p of parts) if (p.axis >= 0) this.sizes[p.axis] = p.command.length;
    this.count = this.sizes.reduce((n, s) => n * s, 1);
  }

  /** The tasks in order, `size` at a time. */
  *batches(size = BATCH_SIZE): Generator<TaskBatch> {
    const { spec, parts, slots, sizes, count, startId } = this;
    const joiner = spec.argMode === 'hydra' ? '=' : ' ';
    const width = String(startId + count - 1).length;
    const digits = sizes.map(() => 0);
    let batch = emptyBatch();
    for (let index = 0; index < count; index++) {
      const id = startId + index;
      let command = spec.command;
      let suffix = '';
      for (const p of parts) {
        const d = p.axis < 0 ? 0 : digits[p.axis]!;
        command += p.command[d]!;
        suffix += p.tag[d]!;
      }
      let params = '{';
      for (let k = 0; k < slots.length; k++) {
        const s = slots[k]!;
        params += (k === 0 ? '' : ',') + s.keyJson + s.valueJson[digits[s.axis]!]!;
      }
      params += '}';
      let tag = '';
      if (spec.tag !== undefined) {
        const number = spec.noTagNumber ? '' : SEP + String(id).padStart(width, '0');
        tag = spec.jobname + number + suffix;
        command += ` ${spec.tag}${joiner}${tag}`;
      }
      batch.ids.push(id);
      batch.commands.push(command);
      batch.tags.push(tag);
      batch.params.push(params);
      if (batch.ids.length === size) {
        yield batch;
        batch = emptyBatch();
      }
      // The next task: the earliest axis varies fastest.
      for (let a = 0; a < digits.length; a++) {
        digits[a]! += 1;
        if (digits[a]! < sizes[a]!) break;
        digits[a] = 0;
      }
    }
    if (batch.ids.length > 0) yield batch;
  }
}

/**
 * Plan a sweep exactly as onager's prelaunch expands it: positional values first, then `+arg`s, then flags; the
 * earliest axis varies fastest; each flag doubles the list (on-variants first); tags are `<jobname>_<n>__...`
 * with n zero-padded to the width of the last id. A sweep that would give the job more than MAX_JOB_TASKS tasks
 * is refused here, before anything is made.
 */
export function planSweep(spec: SweepSpec, options: ExpandOptions = {}): SweepPlan {
  const startId = options.startId ?? 1;
  const joiner = spec.argMode === 'hydra' ? '=' : ' ';
  const args = mergeArgs(spec.args);
  const tagArgs = new Set(spec.tagArgs ?? args.map((a) => a.name));
  const keys = paramKeys(spec.posArgs.length, args, spec.flags);
  const parts: Part[] = [];
  /** The params key each axis writes, if any; a later axis writing the same key replaces the earlier one. */
  const writes = new Map<string, { axis: number; values: string[] }>();
  let axes = 0;
  spec.posArgs.forEach((values, i) => {
    const key = keys.pos[i];
    if (key !== undefined) writes.set(key, { axis: axes, values });
    parts.push({ command: values.map((v) => ` ${v}`), tag: values.map((v) => WSEP + v), axis: axes++ });
  });
  for (const { name, values } of args) {
    const key = tagArgs.has(name) ? WSEP + tagKeyName(name) : undefined;
    if (values.length === 0) {
      parts.push({ command: [` ${name}`], tag: [key ?? ''], axis: -1 });
      continue;
    }
    writes.set(name, { axis: axes, values });
    parts.push({
      command: values.map((v) => ` ${name}${joiner}${v}`),
      tag: values.map((v) => (key === undefined ? '' : key + SEP + v)),
      axis: axes++,
    });
  }
  for (const flag of spec.flags) {
    const mark = flag.replaceAll('-', '').replaceAll('+', '');
    if (keys.flags.has(flag)) writes.set(flag, { axis: axes, values: ['true', 'false'] });
    parts.push({ command: [` ${flag}`, ''], tag: [`${WSEP}+${mark}`, `${WSEP}-${mark}`], axis: axes++ });
  }
  refuseTooMany(parts, startId);
  // The keys in the order JSON.stringify gives an object's own keys (integer-like keys first, as V8 keeps them).
  const order = Object.keys(Object.fromEntries(keys.order.map((k) => [k, 0])));
  const slots = order.map((key) => {
    const w = writes.get(key)!;
    return {
      keyJson: `${JSON.stringify(key)}:`,
      axis: w.axis,
      valueJson: w.values.map((v) => JSON.stringify(v)),
    };
  });
  return new SweepPlan(spec, startId, parts, slots);
}

/** Refuse a sweep whose tasks would take the job past MAX_JOB_TASKS, counting without making any. */
function refuseTooMany(parts: readonly Part[], startId: number): void {
  let count = 1;
  for (const p of parts) {
    if (p.axis < 0) continue;
    count *= p.command.length;
    if (count === 0) return;
  }
  if (startId - 1 + count > MAX_JOB_TASKS) {
    const shown = count > MAX_JOB_TASKS ? `${count.toPrecision(3)}` : String(count);
    throw usageError(
      `the sweep makes ${shown} tasks${startId > 1 ? ` after the job's ids up to ${startId - 1}` : ''}, more than a job may have (${MAX_JOB_TASKS}): split it into several jobs`,
    );
  }
}

/**
 * Expand a sweep into tasks exactly as onager's prelaunch does (see planSweep), all in memory: for small
 * sweeps and tests; prelaunch streams the plan's batches instead.
 */
export function expandSweep(spec: SweepSpec, options: ExpandOptions = {}): SweepTask[] {
  const tasks: SweepTask[] = [];
  for (const b of planSweep(spec, options).batches()) {
    b.ids.forEach((id, i) => {
      tasks.push({
        id,
        command: b.commands[i]!,
        tag: b.tags[i]!,
        params: JSON.parse(b.params[i]!) as Record<string, string>,
      });
    });
  }
  return tasks;
}

/**
 * The params keys of a sweep, in the order the command has them (positionals, +arg names, flags).
 * A `+arg` with values is keyed by its name, the i-th `+pos-arg` by `pos<i>`, a flag by itself. A name that is
 * already taken (a hydra `+arg pos1 ...`, a flag that is also an `+arg`) stays the `+arg`'s: the later one is not
 * recorded, so no value is ever silently replaced by another.
 */
function paramKeys(
  posCount: number,
  args: readonly SweepArg[],
  flags: readonly string[],
): { pos: (string | undefined)[]; flags: Set<string>; order: string[] } {
  const argKeys = args.filter((a) => a.values.length > 0).map((a) => a.name);
  const taken = new Set(argKeys);
  const pos = Array.from({ length: posCount }, (_, i) => `pos${i + 1}`).map((key) => {
    if (taken.has(key)) return undefined;
    taken.add(key);
    return key;
  });
  const own = new Set(flags.filter((flag) => !taken.has(flag)));
  const order = [...pos.filter((k) => k !== undefined), ...argKeys, ...own];
  return { pos, flags: own, order };
}

/** The id after the highest one in a jobfile (onager: `max(ids) + 1`), or 1 for an empty one. */
export function nextTaskId(existing: ReadonlyMap<number, JobEntry>): number {
  let max = 0;
  for (const id of existing.keys()) max = Math.max(max, id);
  return max + 1;
}

/** The `+tag-args` names that are not `+arg` names (onager warns about them and carries on). */
export function unknownTagArgs(spec: Pick<SweepSpec, 'args' | 'tagArgs'>): string[] {
  const names = new Set(spec.args.map((a) => a.name));
  return (spec.tagArgs ?? []).filter((name) => !names.has(name));
}

/** An arg's name as it appears in tags: `_` and `-` dropped, `=` made `_`, `/` made `.` (onager's keyname). */
export function tagKeyName(name: string): string {
  return name.replaceAll('_', '').replaceAll('-', '').replaceAll('=', '_').replaceAll('/', '.');
}

/** Repeated `+arg NAME`s collapse as in onager's dict: the first one's place, the last one's values. */
function mergeArgs(args: readonly SweepArg[]): SweepArg[] {
  const merged = new Map<string, string[]>();
  for (const { name, values } of args) merged.set(name, values);
  return [...merged].map(([name, values]) => ({ name, values }));
}
