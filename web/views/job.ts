// A job's page: its counts and launches, its charts, its result chart and its task table, and the job's actions
// (cancel it, rerun its failed tasks).
import type {
  CancelAnswer,
  JobAnswer,
  LaunchSummary,
  RerunFailedAnswer,
  TaskPageAnswer,
} from '../../src/protocol/dashboard.js';
import { isFailedState, STATES, type State } from '../../src/protocol/states.js';
import { api, enc } from '../api.js';
import { chartBox, histogramChart, timelineChart } from '../charts.js';
import { type Column, dataTable, h, morph } from '../dom.js';
import { fmtTime } from '../format.js';
import { act, generation, listen, main, me, safeRedraw, setRedraw } from '../page.js';
import { countChips, stateBar } from '../states.js';
import { drawResultChart } from './job-result.js';
import { drawTaskTable, PAGE, type TableState } from './job-tasks.js';

// The states, and which count as a bad end, are drover's own (the module has no Node in it).
const BAD: State[] = STATES.filter(isFailedState);

const LAUNCH_COLUMNS: Column<LaunchSummary>[] = [
  { head: 'launch', cell: (l) => l.id },
  { head: 'backend', cell: (l) => l.backend },
  { head: 'tasks', class: 'num', title: (l) => l.tasklist, cell: (l) => l.tasks },
  { head: 'states', cell: (l) => stateBar(l.counts, l.tasks) },
  { head: 'created', cell: (l) => fmtTime(l.created_at) },
  { head: 'first start', cell: (l) => fmtTime(l.first_start) },
  { head: 'last end', cell: (l) => fmtTime(l.last_end) },
  { head: '', cell: (l) => (l.open ? 'open' : '') },
];

/** The job's title, counts, actions (unless read-only) and launches into `head`. */
function drawHead(job: JobAnswer, head: HTMLElement): void {
  const actions = me?.read_only
    ? []
    : [
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'data-testid': 'cancel-job',
            onclick: () => {
              if (confirm(`Cancel every queued and running task of ${job.name}?`))
                void act(api<CancelAnswer>(`/jobs/${enc(job.name)}/cancel`, { method: 'POST', body: {} }));
            },
          },
          'Cancel job',
        ),
        h(
          'button',
          {
            type: 'button',
            'data-testid': 'rerun-failed',
            onclick: () =>
              void act(
                api<RerunFailedAnswer>(`/jobs/${enc(job.name)}/rerun-failed`, { method: 'POST', body: {} }),
              ),
          },
          'Rerun failed',
        ),
      ];
  morph(
    head,
    h('h1', {}, `Job ${job.name} `, h('span', { class: 'muted' }, `${job.tasks} tasks`)),
    countChips(job.counts),
    h('div', { class: 'toolbar' }, ...actions),
    h('h2', {}, 'Launches'),
    dataTable('launches', LAUNCH_COLUMNS, job.launches),
  );
}

/** Show job `name`'s page (drawn when its stream is live). */
export function jobView(name: string): void {
  listen(name);
  const state: TableState = { sort: 'id', desc: false, offset: 0, states: '', q: '', field: '', param: '' };
  let drawnCharts = '';
  const head = h('div', {});
  const charts = h('div', { class: 'charts' });
  const resultBox = h('div', { class: 'chart', 'data-testid': 'result-chart' });
  const table = h('div', {});
  const search = h('input', {
    type: 'search',
    placeholder: 'filter: command, tag or param value',
    'data-testid': 'filter-text',
    size: 32,
  });
  const stateSel = h(
    'select',
    { 'data-testid': 'filter-state' },
    h('option', { value: '' }, 'all states'),
    h('option', { value: BAD.join(',') }, 'failed (any bad end)'),
    ...STATES.map((s) => h('option', { value: s }, s)),
  );
  const pager = h('span', { class: 'muted', 'data-testid': 'pager' });
  const prev = h('button', { type: 'button' }, '‹ prev');
  const next = h('button', { type: 'button' }, 'next ›');
  let timer: number | undefined;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => {
      state.q = search.value;
      state.offset = 0;
      void safeRedraw();
    }, 250);
  });
  stateSel.addEventListener('change', () => {
    state.states = stateSel.value;
    state.offset = 0;
    void safeRedraw();
  });
  prev.addEventListener('click', () => {
    state.offset = Math.max(0, state.offset - PAGE);
    void safeRedraw();
  });
  next.addEventListener('click', () => {
    state.offset += PAGE;
    void safeRedraw();
  });
  main.replaceChildren(
    head,
    charts,
    resultBox,
    h('h2', {}, 'Tasks'),
    h('div', { class: 'toolbar' }, stateSel, search, prev, next, pager),
    table,
  );

  setRedraw(async () => {
    const g = generation;
    const qs = new URLSearchParams({
      sort: state.sort,
      dir: state.desc ? 'desc' : 'asc',
      offset: String(state.offset),
      limit: String(PAGE),
    });
    if (state.states) qs.set('state', state.states);
    if (state.q) qs.set('q', state.q);
    const [job, page] = await Promise.all([
      api<JobAnswer>(`/jobs/${enc(name)}`),
      api<TaskPageAnswer>(`/jobs/${enc(name)}/tasks?${qs}`),
    ]);
    if (g !== generation) return;
    drawHead(job, head);
    const sig = JSON.stringify([job.timeline, job.histogram]);
    if (sig !== drawnCharts) {
      drawnCharts = sig;
      const [tl, tlBody] = chartBox('Attempts over time: running, and ended by state (stacked)', 'timeline');
      const [hi, hiBody] = chartBox('Durations of ended attempts', 'histogram');
      charts.replaceChildren(tl, hi);
      if (job.timeline) timelineChart(job.timeline, tlBody);
      else tlBody.append(h('p', { class: 'muted' }, 'No attempt has started yet.'));
      if (job.histogram) histogramChart(job.histogram, hiBody);
      else hiBody.append(h('p', { class: 'muted' }, 'No attempt has ended yet.'));
    }
    drawTaskTable(job, page, state, { table, pager, prev, next });
    await drawResultChart(job, page.rows, state, resultBox);
  });
}
