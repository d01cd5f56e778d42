import { usageError } from '../errors.js';
import type { ResultObject, TaskResult } from './results.js';

/**
 * The tabular view of results (`drover results`' table and CSV), and the choices on it (`--sort`, `--best`):
 * pure functions over the tasks' results. Columns: `task, state, <each params key>, duration_s, <each result
 * field, nested objects flattened with dots: metrics.acc>`; a result field whose name is already a column
 * (`task`, a params key) is shown as `result.<name>`.
 */

/** A cell: what a column holds for a task (undefined: the task has no such field). */
export type Cell = string | number | boolean | null | undefined;

/** Where a column's values come from. */
export type ColumnKind = 'task' | 'state' | 'param' | 'duration' | 'result';

/** One column of the results' table. */
export interface Column {
  /** Its header. */
  name: string;
  kind: ColumnKind;
  /** The params key or the flattened result field it shows. */
  key: string;
}

/** A result's fields flattened: nested objects joined with dots; arrays and scalars are values. */
export function flattenResult(result: ResultObject): Map<string, Exclude<Cell, undefined> | unknown[]> {
  const out = new Map<string, Exclude<Cell, undefined> | unknown[]>();
  const walk = (value: unknown, prefix: string) => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(v, prefix === '' ? k : `${prefix}.${k}`);
    } else out.set(prefix, value as Exclude<Cell, undefined> | unknown[]);
  };
  walk(result, '');
  return out;
}

/** The columns of these tasks' results, params keys and result fields in order of first appearance. */
export function resultColumns(tasks: readonly TaskResult[], flat: readonly FlatResult[]): Column[] {
  const params = new Set<string>();
  const fields = new Set<string>();
  tasks.forEach((t, i) => {
    for (const k of Object.keys(t.params)) params.add(k);
    for (const k of flat[i]!.keys()) fields.add(k);
  });
  const taken = new Set(['task', 'state', 'duration_s', ...params]);
  return [
    { name: 'task', kind: 'task', key: 'task' },
    { name: 'state', kind: 'state', key: 'state' },
    ...[...params].map((k): Column => ({ name: k, kind: 'param', key: k })),
    { name: 'duration_s', kind: 'duration', key: 'duration_s' },
    ...[...fields].map((k): Column => ({ name: taken.has(k) ? `result.${k}` : k, kind: 'result', key: k })),
  ];
}

/** A task's flattened result (empty when it has none). */
export type FlatResult = Map<string, Exclude<Cell, undefined> | unknown[]>;

/** The value a column has for a task. */
export function cellOf(column: Column, task: TaskResult, flat: FlatResult): Cell | unknown[] {
  switch (column.kind) {
    case 'task':
      return task.task;
    case 'state':
      return task.state;
    case 'param':
      return Object.hasOwn(task.params, column.key) ? task.params[column.key] : undefined;
    case 'duration':
      return task.duration_s;
    case 'result':
      return flat.get(column.key);
  }
}

/**
 * The column FIELD names: `task`, `state` or `duration_s`, a params key or a result field (`result.NAME` and
 * `params.NAME` say which when a name is both). Unknown or ambiguous names are usage errors naming what there is.
 */
export function resolveField(field: string, columns: readonly Column[], flag: string): Column {
  if (field === '' || /[\u0000-\u001f\u007f]/.test(field))
    throw usageError(
      `${flag} ${JSON.stringify(field)} is no field name: give a result field, a param, duration_s or task`,
    );
  // task, state and duration_s are always the task's own (a result field of that name is result.NAME).
  const own = columns.find((c) => c.kind !== 'param' && c.kind !== 'result' && c.name === field);
  if (own) return own;
  const byName = columns.filter((c) => c.name === field);
  const byParam = field.startsWith('params.')
    ? columns.filter((c) => c.kind === 'param' && c.key === field.slice(7))
    : [];
  const byResult = columns.filter((c) => c.kind === 'result' && c.key === field);
  const found = [...new Set([...byName, ...byParam, ...byResult])];
  if (found.length === 1) return found[0]!;
  if (found.length > 1) {
    throw usageError(
      `${flag} ${JSON.stringify(field)} is both a param and a result field: say result.${field} or params.${field}`,
    );
  }
  const names = columns.filter((c) => c.kind !== 'state').map((c) => c.name);
  const shown = names.length > 12 ? [...names.slice(0, 12), '...'] : names;
  throw usageError(
    `${flag} ${JSON.stringify(field.slice(0, 100))} names no field of these results: use one of ${shown.join(', ')}`,
  );
}

/** A value as a finite number when it is one, else undefined. */
export function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * The value a column sorts and chooses by: a params value is text, so one written as a decimal number (`0.01`,
 * `1e-3`, `-2`) counts as that number; a result field counts as a number only when the task wrote a number.
 */
export function sortValue(column: Column, cell: unknown): unknown {
  if (column.kind !== 'param' || typeof cell !== 'string') return cell;
  return /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(cell) ? Number(cell) : cell;
}

/** Order the rows by a column: numbers by value, then text, then the rows without one; ties by task id. */
export function sortRows<T extends { task: TaskResult }>(
  rows: readonly T[],
  keyOf: (row: T) => unknown,
  descending: boolean,
): T[] {
  const rank = (v: unknown) => (numberOf(v) !== undefined ? 0 : v === undefined || v === null ? 2 : 1);
  return [...rows].sort((a, b) => {
    const va = keyOf(a);
    const vb = keyOf(b);
    const ra = rank(va);
    const rb = rank(vb);
    if (ra !== rb) return ra - rb;
    let c = 0;
    if (ra === 0) c = numberOf(va)! - numberOf(vb)!;
    else if (ra === 1)
      c = String(typeof va === 'object' ? JSON.stringify(va) : va).localeCompare(
        String(typeof vb === 'object' ? JSON.stringify(vb) : vb),
      );
    if (descending) c = -c;
    return c !== 0 ? c : a.task.task - b.task.task;
  });
}

/** The best row by a column: the least (or greatest) finite number; ties go to the lowest task id. */
export function bestRow<T extends { task: TaskResult }>(
  rows: readonly T[],
  keyOf: (row: T) => unknown,
  max: boolean,
): T | undefined {
  let best: T | undefined;
  let bestValue = 0;
  for (const row of rows) {
    const v = numberOf(keyOf(row));
    if (v === undefined) continue;
    if (
      best === undefined ||
      (max ? v > bestValue : v < bestValue) ||
      (v === bestValue && row.task.task < best.task.task)
    ) {
      best = row;
      bestValue = v;
    }
  }
  return best;
}

/** `FIELD[:suffix]` split, the suffix one of `allowed` (the first is the default); other suffixes are the field's. */
export function fieldAndMode<M extends string>(text: string, allowed: readonly M[]): [string, M] {
  const at = text.lastIndexOf(':');
  const suffix = at < 0 ? undefined : text.slice(at + 1);
  if (suffix !== undefined && (allowed as readonly string[]).includes(suffix))
    return [text.slice(0, at), suffix as M];
  return [text, allowed[0]!];
}
