// A job page's task table: a page of rows, sorted by a click on a column's head, each queued or running task
// with a cancel button.
import type { CancelAnswer, JobAnswer, TaskPageAnswer, TaskPageRow } from '../../src/protocol/dashboard.js';
import { api, enc } from '../api.js';
import { type Column, dataTable, h, morph } from '../dom.js';
import { fmtDur, fmtTime, fmtValue } from '../format.js';
import { act, me, safeRedraw } from '../page.js';
import { stateBadge } from '../states.js';

/** Rows a page of the table shows. */
export const PAGE = 100;

/** What the table shows: its sort, filter and page (and the result chart's choice). */
export interface TableState {
  sort: string;
  desc: boolean;
  offset: number;
  /** `state=`: states, comma separated; '' for all. */
  states: string;
  /** The text filter. */
  q: string;
  field: string;
  param: string;
}

/** The table's parts around it: where it goes, its pager text and buttons. */
export interface TableParts {
  table: HTMLElement;
  pager: HTMLElement;
  prev: HTMLButtonElement;
  next: HTMLButtonElement;
}

/** Draw `page` of `job`'s tasks into `parts`, sorted and paged as `state` says. */
export function drawTaskTable(
  job: JobAnswer,
  page: TaskPageAnswer,
  state: TableState,
  parts: TableParts,
): void {
  const { table, pager, prev, next } = parts;
  const resultKeys = [...new Set(page.rows.flatMap((r) => (r.result ? Object.keys(r.result) : [])))].slice(
    0,
    12,
  );
  /** A column named `key` (`data-sort`), which sorts the table by it when its head is clicked if `sorts`. */
  const col = (key: string, c: Column<TaskPageRow>, sorts = key !== ''): Column<TaskPageRow> => ({
    ...c,
    th: {
      class: `${sorts ? 'sortable' : ''} ${state.sort === key ? `sorted${state.desc ? ' desc' : ''}` : ''}`,
      'data-sort': key,
      onclick: sorts
        ? () => {
            state.desc = state.sort === key ? !state.desc : false;
            state.sort = key;
            state.offset = 0;
            void safeRedraw();
          }
        : undefined,
    },
  });
  const columns: Column<TaskPageRow>[] = [
    col('id', {
      head: 'task',
      class: 'num',
      cell: (r) => h('a', { href: `#/jobs/${enc(job.name)}/tasks/${r.id}` }, r.id),
    }),
    col('state', { head: 'state', cell: (r) => stateBadge(r.state) }),
    col('exit', { head: 'exit', class: 'num', cell: (r) => r.exit_code ?? r.signal ?? '–' }),
    col('attempts', { head: 'attempts', class: 'num', cell: (r) => r.attempts }),
    ...job.params.map((p) => col(`param:${p}`, { head: p, cell: (r) => r.params[p] ?? '' })),
    col('duration', { head: 'duration', class: 'num', cell: (r) => fmtDur(r.duration_s) }),
    col('host', { head: 'host', cell: (r) => r.host ?? '–' }),
    col('started', { head: 'started', cell: (r) => fmtTime(r.started_at) }),
    ...resultKeys.map((k) =>
      col(
        `result:${k}`,
        { head: k, class: 'num', cell: (r) => (r.result && k in r.result ? fmtValue(r.result[k]) : '') },
        false,
      ),
    ),
    ...(job.params.length === 0
      ? [col('command', { head: 'command', class: 'cmd', title: (r) => r.command, cell: (r) => r.command })]
      : []),
    col('', {
      head: '',
      cell: (r) =>
        !me?.read_only && (r.state === 'queued' || r.state === 'running')
          ? h(
              'button',
              {
                type: 'button',
                class: 'danger',
                'data-testid': 'cancel-task',
                onclick: () =>
                  void act(
                    api<CancelAnswer>(`/jobs/${enc(job.name)}/cancel`, {
                      method: 'POST',
                      body: { tasklist: String(r.id) },
                    }),
                  ),
              },
              'cancel',
            )
          : '',
    }),
  ];
  const from = page.total === 0 ? 0 : state.offset + 1;
  pager.textContent = `${from}–${state.offset + page.rows.length} of ${page.total}`;
  prev.disabled = state.offset === 0;
  next.disabled = state.offset + PAGE >= page.total;
  morph(
    table,
    dataTable('tasks', columns, page.rows, (r) => ({ 'data-task': r.id })),
  );
}
