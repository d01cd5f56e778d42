import type { JobEntry, SweepArg, SweepSpec, SweepTask } from './types.js';

/** Separator inside one tag part (`lr_0.1`) and after the jobname (`exp_01`), as onager's SEP. */
const SEP = '_';
/** Separator between tag parts (`exp_1__lr_0.1`), as onager's WSEP. */
const WSEP = '__';

/** Options for expandSweep. */
export interface ExpandOptions {
  /** Id of the first new task: 1 for a new job, `nextTaskId(existing)` for `+append`. */
  startId?: number;
}

interface Row {
  command: string;
  suffix: string;
  /** The sweep values that made this row, keyed as `SweepTask.params` says. */
  params: Record<string, string>;
}

/**
 * Expand a sweep into tasks exactly as onager's prelaunch does: positional values first, then `+arg`s, then
 * flags; the earliest axis varies fastest; each flag doubles the list (on-variants first); tags are
 * `<jobname>_<n>__...` with n zero-padded to the width of the last id.
 */
export function expandSweep(spec: SweepSpec, options: ExpandOptions = {}): SweepTask[] {
  const startId = options.startId ?? 1;
  const joiner = spec.argMode === 'hydra' ? '=' : ' ';
  const args = mergeArgs(spec.args);
  const tagArgs = new Set(spec.tagArgs ?? args.map((a) => a.name));
  const keys = paramKeys(spec.posArgs.length, args, spec.flags);
  let rows: Row[] = [{ command: spec.command, suffix: '', params: {} }];
  spec.posArgs.forEach((values, i) => {
    const key = keys.pos[i];
    rows = values.flatMap((v) =>
      rows.map((r) => ({
        command: `${r.command} ${v}`,
        suffix: r.suffix + WSEP + v,
        params: key === undefined ? r.params : { ...r.params, [key]: v },
      })),
    );
  });
  for (const { name, values } of args) {
    const key = tagArgs.has(name) ? WSEP + tagKeyName(name) : undefined;
    if (values.length === 0) {
      rows = rows.map((r) => ({ ...r, command: `${r.command} ${name}`, suffix: r.suffix + (key ?? '') }));
      continue;
    }
    rows = values.flatMap((v) =>
      rows.map((r) => ({
        command: `${r.command} ${name}${joiner}${v}`,
        suffix: key === undefined ? r.suffix : r.suffix + key + SEP + v,
        params: { ...r.params, [name]: v },
      })),
    );
  }
  for (const flag of spec.flags) {
    const mark = flag.replaceAll('-', '').replaceAll('+', '');
    const own = keys.flags.has(flag);
    const on = rows.map((r) => ({
      command: `${r.command} ${flag}`,
      suffix: `${r.suffix}${WSEP}+${mark}`,
      params: own ? { ...r.params, [flag]: 'true' } : r.params,
    }));
    const off = rows.map((r) => ({
      command: r.command,
      suffix: `${r.suffix}${WSEP}-${mark}`,
      params: own ? { ...r.params, [flag]: 'false' } : r.params,
    }));
    rows = [...on, ...off];
  }
  const width = String(startId + rows.length - 1).length;
  return rows.map((row, index) => {
    const id = startId + index;
    const params = orderParams(row.params, keys.order);
    if (spec.tag === undefined) return { id, command: row.command, tag: '', params };
    const number = spec.noTagNumber ? '' : SEP + String(id).padStart(width, '0');
    const tag = spec.jobname + number + row.suffix;
    return { id, command: `${row.command} ${spec.tag}${joiner}${tag}`, tag, params };
  });
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

/**
 * The same params with their keys in `order` (JSON keeps insertion order). Own properties only, made with
 * fromEntries: a key such as `__proto__` or `toString` is data, never the prototype's.
 */
function orderParams(params: Record<string, string>, order: readonly string[]): Record<string, string> {
  return Object.fromEntries(order.filter((k) => Object.hasOwn(params, k)).map((k) => [k, params[k]!]));
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
