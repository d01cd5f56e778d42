import type { State } from '../protocol/states.js';
import { idIn } from './id-list.js';

/**
 * The one WHERE of "a job's tasks, maybe only some ids and states" that every query over `tasks` builds on
 * (`list`, its table and exports, `list --json`, `results`, `--failed`/`--unfinished`, `status`, the dashboard).
 */

/** Which of a job's tasks a query takes (both given: the tasks that are in both; neither: every task). */
export interface TaskFilter {
  /** Only these task ids. */
  ids?: readonly number[];
  /** Only tasks whose latest state is one of these. */
  states?: readonly State[];
}

/**
 * What a WHERE on these states should also say so that SQLite may use the state index `tasks_state`, which holds
 * no pending task (schema 7): `state != 'pending'` when the states imply it, else nothing (an empty list).
 * `t` qualifies the column (`t.`).
 */
export function stateIndexTerms(states: readonly State[], t = ''): string[] {
  return states.includes('pending') ? [] : [`${t}state != 'pending'`];
}

/**
 * The WHERE of a job's tasks under a filter: `job_id = ?` (the job's id comes first, from the caller), the ids as
 * idIn makes them (a range along the key when they are consecutive, else a JSON list), and the states as a JSON
 * list with stateIndexTerms; their arguments in `args`, in that order. `table` qualifies the columns (`t`).
 */
export function taskWhere(filter: TaskFilter, table = ''): { sql: string; args: (number | string)[] } {
  const t = table === '' ? '' : `${table}.`;
  const ids = filter.ids ? idIn(`${t}id`, filter.ids) : undefined;
  return {
    sql: [
      `${t}job_id = ?`,
      ...(ids ? [ids.sql] : []),
      ...(filter.states
        ? [`${t}state IN (SELECT value FROM json_each(?))`, ...stateIndexTerms(filter.states, t)]
        : []),
    ].join(' AND '),
    args: [...(ids?.params ?? []), ...(filter.states ? [JSON.stringify(filter.states)] : [])],
  };
}
