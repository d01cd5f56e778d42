// The drover dashboard (docs/dashboard.md): a page per thing — jobs, a job, a task, pools — drawn from the
// server's /v1/ui routes, redrawn when the server's event stream says something changed. Everything a user
// wrote (commands, tags, params, logs) goes into the page as text, never as markup.
import uPlot from 'uplot';
import type {
  AttemptRow,
  CancelAnswer,
  ChartAnswer,
  Histogram,
  JobAnswer,
  JobSummary,
  JobsAnswer,
  LaunchSummary,
  LoginAnswer,
  LogoutAnswer,
  LogTail,
  MeAnswer,
  PoolsAnswer,
  PoolWorker,
  RerunFailedAnswer,
  TaskAnswer,
  TaskPageAnswer,
  TaskPageRow,
  Timeline,
} from '../src/protocol/dashboard.js';
import { isFailedState, STATES, type State } from '../src/protocol/states.js';
import { type Column, dataTable, h } from './dom.js';

// The states, and which count as a bad end, are drover's own (the module has no Node in it).
const BAD: State[] = STATES.filter(isFailedState);
const COLOURS: Record<string, string> = {
  pending: '#b0b7bf',
  queued: '#8aa4c8',
  running: '#2f7ed8',
  succeeded: '#2e9e5b',
  failed: '#d64541',
  killed: '#8e44ad',
  timeout: '#e67e22',
  cancelled: '#7f8c8d',
  lost: '#c0392b',
  error: '#a93226',
};
const API = '/v1/ui';
const PAGE = 100;

// ---- small helpers ------------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

// The session's page key (docs/dashboard.md): the server checks it with the session cookie on every request.
// The page keeps it in this origin's storage (the origin includes the port: no other service on this host
// reads it), or in memory where the browser keeps no storage.
const KEY_STORE = 'drover-page-key';
let keyInMemory: string | undefined;

function pageKey(): string | undefined {
  try {
    return localStorage.getItem(KEY_STORE) ?? undefined;
  } catch {
    return keyInMemory;
  }
}

/** Keep the page key of a new session, or forget it (undefined). */
function keepKey(key: string | undefined): void {
  keyInMemory = key;
  try {
    if (key === undefined) localStorage.removeItem(KEY_STORE);
    else localStorage.setItem(KEY_STORE, key);
  } catch {
    // no storage: kept in memory
  }
}

// A one-time login link's redirect brings the key in the fragment (sent to no server): keep it, and take it out
// of the address and the history.
{
  const given = /^#page_key=([\w-]+)$/.exec(location.hash)?.[1];
  if (given !== undefined) {
    keepKey(given);
    history.replaceState(null, '', location.pathname + location.search);
  }
}

async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const key = pageKey();
  const res = await fetch(API + path, {
    method: init.method ?? 'GET',
    credentials: 'same-origin',
    headers: {
      ...(key !== undefined ? { 'x-drover-page-key': key } : {}),
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(init.method && init.method !== 'GET' ? { 'x-drover-dashboard': '1' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  const body = text === '' ? {} : (JSON.parse(text) as { error?: { message: string } });
  if (!res.ok) throw new ApiError(res.status, body.error?.message ?? `${res.status} ${res.statusText}`);
  return body as T;
}

const enc = encodeURIComponent;
const fmtTime = (s: number | null) => (s === null ? '–' : new Date(s * 1000).toLocaleString());
function fmtAgo(s: number): string {
  const d = Date.now() / 1000 - s;
  if (d < 60) return `${Math.max(0, Math.round(d))}s ago`;
  if (d < 3600) return `${Math.round(d / 60)}m ago`;
  if (d < 86400) return `${Math.round(d / 3600)}h ago`;
  return `${Math.round(d / 86400)}d ago`;
}
function fmtDur(s: number | null): string {
  if (s === null) return '–';
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
/** A result value: numbers to 6 significant digits, the rest as JSON. */
function fmtValue(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  return typeof v === 'string' ? v : JSON.stringify(v);
}
const stateBadge = (s: string) => h('span', { class: `state ${s}`, 'data-state': s }, s);

function stateBar(counts: Record<string, number>, total: number): HTMLElement {
  const bar = h('div', {
    class: 'bar',
    title: STATES.filter((s) => counts[s])
      .map((s) => `${s} ${counts[s]}`)
      .join(', '),
  });
  for (const s of STATES) {
    const n = counts[s] ?? 0;
    if (n === 0 || total === 0) continue;
    const part = h('span', { class: s });
    part.style.width = `${(100 * n) / total}%`;
    bar.append(part);
  }
  return bar;
}

function countChips(counts: Record<string, number>): HTMLElement {
  return h(
    'div',
    { class: 'counts', 'data-testid': 'counts' },
    ...STATES.filter((s) => counts[s]).map((s) =>
      h('span', { 'data-count': s }, stateBadge(s), ' ', h('b', {}, counts[s] ?? 0)),
    ),
  );
}

// ---- the app: routing, login, live updates ------------------------------------------------------------------

const main = document.getElementById('main') as HTMLElement;
const where = document.getElementById('where') as HTMLElement;
const liveDot = document.getElementById('live') as HTMLElement;
const logout = document.getElementById('logout') as HTMLButtonElement;
let me: MeAnswer | undefined;
let events: EventSource | undefined;
/** The current view's redraw (called on each change the server reports). */
let redraw: (() => Promise<void>) | undefined;
let drawing = false;
let again = false;
/** Bumped by each navigation: a draw of an earlier view stops touching the page. */
let generation = 0;

async function safeRedraw(): Promise<void> {
  if (!redraw) return;
  if (drawing) {
    again = true;
    return;
  }
  drawing = true;
  try {
    await redraw();
  } catch (err) {
    showError(err);
  } finally {
    drawing = false;
    if (again) {
      again = false;
      void safeRedraw();
    }
  }
}

/**
 * Open the view's event stream; it also starts the view's first draw. The server answers 'ready' once it has
 * taken the view's signature, so a change after that is reported: drawing then (not also on navigation) fetches
 * each thing once and misses nothing. A 'ready' after a reconnect draws again (changes may have been missed); a
 * stream that cannot open (too many, logged out) still gets its one draw, not live.
 */
function listen(job?: string): void {
  events?.close();
  // An EventSource sends no headers of ours: its route takes the page key as a query parameter.
  const query = new URLSearchParams({ ...(job ? { job } : {}), page_key: pageKey() ?? '' });
  const source = new EventSource(`${API}/events?${query}`);
  events = source;
  let drawn = false;
  const onEvent = () => {
    liveDot.classList.add('on');
    drawn = true;
    void safeRedraw();
  };
  source.addEventListener('ready', onEvent);
  source.addEventListener('change', onEvent);
  source.onerror = () => {
    liveDot.classList.remove('on');
    if (!drawn && events === source) {
      drawn = true;
      void safeRedraw();
    }
  };
}

function showError(err: unknown): void {
  if (err instanceof ApiError && err.status === 401) {
    keepKey(undefined);
    showLogin();
    return;
  }
  main.replaceChildren(
    h('p', { class: 'error', 'data-testid': 'error' }, err instanceof Error ? err.message : String(err)),
  );
}

function showLogin(message?: string): void {
  events?.close();
  redraw = undefined;
  logout.hidden = true;
  where.textContent = '';
  const input = h('input', {
    type: 'password',
    name: 'token',
    placeholder: 'drv_…',
    autocomplete: 'off',
    'data-testid': 'token',
  });
  const note = h('p', { class: 'error' }, message ?? '');
  const form = h(
    'form',
    { class: 'login', 'data-testid': 'login' },
    h('h1', {}, 'Log in to drover'),
    h(
      'p',
      { class: 'muted' },
      'Paste a user token (the file .drover/server/token, or drover server token create), or open the one-time link drover server / drover ui printed.',
    ),
    input,
    h('button', { type: 'submit' }, 'Log in'),
    note,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    api<LoginAnswer>('/login', { method: 'POST', body: { token: input.value } })
      .then((a) => {
        keepKey(a.page_key);
        return route();
      })
      .catch((err: unknown) => {
        note.textContent = err instanceof Error ? err.message : String(err);
      });
  });
  main.replaceChildren(form);
  input.focus();
}

async function route(): Promise<void> {
  generation++;
  redraw = undefined;
  let who: NonNullable<typeof me>;
  try {
    who = me ?? (await api<MeAnswer>('/me'));
    me = who;
  } catch (err) {
    return showError(err);
  }
  logout.hidden = false;
  // The folder's name (its full path on hover): enough to tell dashboards apart, and a screenshot shows no path.
  where.textContent = `${
    who.folder
      .replace(/\/\.drover\/?$/, '')
      .split('/')
      .at(-1) ?? ''
  }${who.read_only ? ' — read-only' : ''}`;
  where.title = who.folder;
  // The last view's content goes at once: its first draw waits for the new view's stream (see listen).
  main.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'jobs' && parts[1] && parts[2] === 'tasks' && parts[3])
    taskView(parts[1], Number(parts[3]));
  else if (parts[0] === 'jobs' && parts[1]) jobView(parts[1]);
  else if (parts[0] === 'pools') poolsView();
  else jobsView();
  // The view's first draw comes with its stream's 'ready' (see listen).
}

logout.addEventListener('click', () => {
  void api<LogoutAnswer>('/logout', { method: 'POST' }).finally(() => {
    keepKey(undefined);
    me = undefined;
    showLogin('Logged out.');
  });
});
window.addEventListener('hashchange', () => void route());

// ---- jobs ---------------------------------------------------------------------------------------------------

/** States a task ends in (not waiting or running). */
const ENDED = STATES.filter((s) => s !== 'pending' && s !== 'queued' && s !== 'running');

const JOB_COLUMNS: Column<JobSummary>[] = [
  { head: 'job', cell: (j) => h('a', { href: `#/jobs/${enc(j.name)}` }, j.name) },
  { head: 'tasks', class: 'num', cell: (j) => j.tasks },
  { head: 'states', cell: (j) => stateBar(j.counts, j.tasks) },
  {
    head: 'done',
    class: 'num',
    cell: (j) =>
      j.tasks ? `${Math.floor((100 * ENDED.reduce((a, s) => a + (j.counts[s] ?? 0), 0)) / j.tasks)}%` : '–',
  },
  {
    head: 'counts',
    cell: (j) =>
      STATES.filter((s) => j.counts[s])
        .map((s) => `${s} ${j.counts[s]}`)
        .join(' · '),
  },
  {
    head: 'launches',
    class: 'num',
    cell: (j) => `${j.launches}${j.open_launches ? ` (${j.open_launches} open)` : ''}`,
  },
  { head: 'last activity', title: (j) => fmtTime(j.last_activity), cell: (j) => fmtAgo(j.last_activity) },
];

function jobsView(): void {
  listen();
  redraw = async () => {
    const g = generation;
    const { jobs } = await api<JobsAnswer>('/jobs');
    if (g !== generation) return;
    main.replaceChildren(
      h('h1', {}, 'Jobs'),
      jobs.length === 0
        ? h('p', { class: 'muted' }, 'No jobs yet: drover prelaunch … then drover launch.')
        : dataTable('jobs', JOB_COLUMNS, jobs, (j) => ({ 'data-job': j.name })),
    );
  };
}

// ---- a job --------------------------------------------------------------------------------------------------

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

function chartBox(title: string, testid: string): [HTMLElement, HTMLElement] {
  const body = h('div', {});
  return [h('div', { class: 'chart', 'data-testid': testid }, h('h3', {}, title), body), body];
}

function timelineChart(t: Timeline, into: HTMLElement): void {
  // Stacked: each series is the sum of itself and those below it, drawn from the top down so each fills to 0.
  const layers: [string, number[]][] = [['running', t.running], ...Object.entries(t.ended)];
  const stacked: number[][] = [];
  let acc = t.t.map(() => 0);
  for (const [, v] of layers) {
    acc = acc.map((a, i) => a + (v[i] ?? 0));
    stacked.push(acc);
  }
  const order = layers.map((_, i) => i).reverse();
  const data = [t.t, ...order.map((i) => stacked[i] as number[])] as uPlot.AlignedData;
  new uPlot(
    {
      width: 520,
      height: 220,
      series: [
        {},
        ...order.map((i) => {
          const name = layers[i]?.[0] ?? '';
          return { label: name, stroke: COLOURS[name], fill: `${COLOURS[name]}cc`, points: { show: false } };
        }),
      ],
      axes: [{}, { label: 'attempts' }],
    },
    data,
    into,
  );
}

function histogramChart(hist: Histogram, into: HTMLElement): void {
  const xs = hist.counts.map((_, i) => hist.min + hist.width * (i + 0.5));
  new uPlot(
    {
      width: 420,
      height: 220,
      scales: { x: { time: false } },
      series: [
        { label: 'seconds', value: (_u, v) => (v === null ? '–' : fmtDur(v)) },
        {
          label: 'attempts',
          stroke: COLOURS.running,
          fill: `${COLOURS.running}99`,
          paths: uPlot.paths.bars?.({ size: [0.9, 60] }),
          points: { show: false },
        },
      ],
      axes: [{ label: 'duration (s)' }, {}],
    },
    [xs, hist.counts],
    into,
  );
}

function jobView(name: string): void {
  listen(name);
  const state = { sort: 'id', desc: false, offset: 0, states: '' as string, q: '', field: '', param: '' };
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

  redraw = async () => {
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
    drawHead(job);
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
    drawTable(job, page);
    await drawResultChart(job, page.rows);
  };

  function drawHead(job: JobAnswer): void {
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
    head.replaceChildren(
      h('h1', {}, `Job ${job.name} `, h('span', { class: 'muted' }, `${job.tasks} tasks`)),
      countChips(job.counts),
      h('div', { class: 'toolbar' }, ...actions),
      h('h2', {}, 'Launches'),
      dataTable('launches', LAUNCH_COLUMNS, job.launches),
    );
  }

  function drawTable(job: JobAnswer, page: TaskPageAnswer): void {
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
    table.replaceChildren(dataTable('tasks', columns, page.rows, (r) => ({ 'data-task': r.id })));
  }

  async function drawResultChart(job: JobAnswer, rows: TaskPageRow[]): Promise<void> {
    const fields = [
      ...new Set(
        rows.flatMap((r) =>
          r.result ? Object.keys(r.result).filter((k) => typeof r.result?.[k] === 'number') : [],
        ),
      ),
    ];
    if (fields.length === 0 || job.params.length === 0) {
      resultBox.replaceChildren();
      return;
    }
    if (!fields.includes(state.field)) state.field = fields[0] as string;
    if (!job.params.includes(state.param)) state.param = job.params[0] as string;
    const fieldSel = h(
      'select',
      { 'data-testid': 'chart-field' },
      ...fields.map((f) => h('option', { value: f, selected: f === state.field }, f)),
    );
    const paramSel = h(
      'select',
      { 'data-testid': 'chart-param' },
      ...job.params.map((p) => h('option', { value: p, selected: p === state.param }, p)),
    );
    fieldSel.addEventListener('change', () => {
      state.field = fieldSel.value;
      void safeRedraw();
    });
    paramSel.addEventListener('change', () => {
      state.param = paramSel.value;
      void safeRedraw();
    });
    const chart = await api<ChartAnswer>(
      `/jobs/${enc(job.name)}/chart?field=${enc(state.field)}&param=${enc(state.param)}`,
    );
    const body = h('div', {});
    resultBox.replaceChildren(
      h(
        'h3',
        {},
        'Result ',
        fieldSel,
        ' against ',
        paramSel,
        h('span', { class: 'muted' }, ' (mean, least and most over succeeded tasks)'),
      ),
      body,
    );
    if (chart.points.length === 0)
      return void body.append(h('p', { class: 'muted' }, 'No succeeded task has this field yet.'));
    const xs = chart.points.map((p, i) => (chart.numeric ? Number(p.value) : i));
    const labels = chart.points.map((p) => p.value);
    new uPlot(
      {
        width: 520,
        height: 220,
        scales: { x: { time: false } },
        series: [
          { label: state.param, value: (_u, v) => (chart.numeric ? String(v) : (labels[v] ?? '')) },
          { label: 'mean', stroke: COLOURS.running, width: 2 },
          { label: 'least', stroke: COLOURS.succeeded, dash: [4, 4] },
          { label: 'most', stroke: COLOURS.failed, dash: [4, 4] },
        ],
        axes: [
          {
            label: state.param,
            ...(chart.numeric ? {} : { values: (_u, vals) => vals.map((v) => labels[v] ?? '') }),
          },
          { label: state.field },
        ],
      },
      [xs, chart.points.map((p) => p.mean), chart.points.map((p) => p.min), chart.points.map((p) => p.max)],
      body,
    );
  }
}

async function act(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    alert(err instanceof Error ? err.message : String(err));
  }
  // A live stream reports the action's change (one redraw for one change); a page without one redraws itself.
  if (events?.readyState !== EventSource.OPEN) await safeRedraw();
}

// ---- a task -------------------------------------------------------------------------------------------------

const ATTEMPT_COLUMNS: Column<AttemptRow>[] = [
  {
    head: 'attempt',
    class: 'num',
    cell: (a) => h('button', { type: 'button', class: 'link', title: 'show its logs' }, a.attempt),
  },
  { head: 'launch', class: 'num', cell: (a) => a.launch_id },
  { head: 'backend', cell: (a) => a.backend },
  { head: 'state', cell: (a) => stateBadge(a.state) },
  { head: 'exit', class: 'num', cell: (a) => a.exit_code ?? a.signal ?? '–' },
  { head: 'started', cell: (a) => fmtTime(a.started_at) },
  { head: 'duration', class: 'num', cell: (a) => fmtDur(a.duration_s) },
  { head: 'host', cell: (a) => a.host ?? '–' },
  { head: 'reason', cell: (a) => a.reason ?? '' },
];

function taskView(job: string, id: number): void {
  listen(job);
  let pinned: number | undefined;
  let poll: number | undefined;
  const g0 = generation;
  redraw = async () => {
    const g = generation;
    const t = await api<TaskAnswer>(
      `/jobs/${enc(job)}/tasks/${id}${pinned !== undefined ? `?attempt=${pinned}` : ''}`,
    );
    if (g !== generation) return;
    const r = t.task;
    const running = r.state === 'running' || r.state === 'queued';
    // Logs grow without the record changing: while the task runs, look again every second.
    clearTimeout(poll);
    if (running)
      poll = window.setTimeout(() => {
        if (generation === g0) void safeRedraw();
      }, 1000);
    const log = (name: string, tail: LogTail) =>
      h(
        'div',
        { 'data-testid': `log-${name}` },
        h(
          'h2',
          {},
          name,
          ' ',
          h(
            'span',
            { class: 'muted' },
            tail.path
              ? `${tail.path}${tail.size === null ? ' (not there)' : ` — ${tail.size} bytes${tail.cut ? ', last 16 KiB shown' : ''}`}`
              : 'no log',
          ),
        ),
        h('pre', { class: 'log' }, tail.text || (tail.size === 0 ? '(empty)' : '')),
      );
    main.replaceChildren(
      h('h1', {}, h('a', { href: `#/jobs/${enc(job)}` }, job), ` / task ${r.id} `, stateBadge(r.state)),
      h(
        'dl',
        { class: 'kv' },
        h('dt', {}, 'command'),
        h('dd', {}, r.command),
        ...(r.tag ? [h('dt', {}, 'tag'), h('dd', {}, r.tag)] : []),
        ...Object.entries(r.params).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
        h('dt', {}, 'exit'),
        h('dd', {}, String(r.exit_code ?? r.signal ?? '–')),
        h('dt', {}, 'duration'),
        h('dd', {}, fmtDur(r.duration_s)),
        h('dt', {}, 'host'),
        h('dd', {}, r.host ?? '–'),
        ...(t.result ? [h('dt', {}, 'result'), h('dd', {}, JSON.stringify(t.result))] : []),
      ),
      h(
        'div',
        { class: 'toolbar' },
        !me?.read_only && running
          ? h(
              'button',
              {
                type: 'button',
                class: 'danger',
                'data-testid': 'cancel-task',
                onclick: () =>
                  void act(
                    api<CancelAnswer>(`/jobs/${enc(job)}/cancel`, {
                      method: 'POST',
                      body: { tasklist: String(id) },
                    }),
                  ),
              },
              'Cancel task',
            )
          : '',
      ),
      h('h2', {}, 'Attempts'),
      dataTable('attempts', ATTEMPT_COLUMNS, t.attempts, (a) => ({
        class: a.attempt === t.attempt ? 'selected' : '',
        title: a.current ? '' : 'an earlier command of this task',
        // A click on the row shows that attempt's logs.
        onclick: () => {
          pinned = a.attempt;
          void safeRedraw();
        },
      })),
      log('stderr', t.stderr),
      log('stdout', t.stdout),
    );
  };
}

// ---- pools --------------------------------------------------------------------------------------------------

const WORKER_COLUMNS: Column<PoolWorker>[] = [
  { head: 'worker', cell: (w) => w.id },
  { head: 'host', cell: (w) => w.host },
  { head: 'pid', class: 'num', cell: (w) => w.pid },
  { head: 'state', cell: (w) => w.state },
  { head: 'slots', class: 'num', cell: (w) => w.slots },
  { head: 'busy', class: 'num', cell: (w) => (w.free_slots === null ? '–' : w.slots - w.free_slots) },
  { head: 'seen', cell: (w) => `${Math.round(w.seen_ago)}s ago` },
  { head: 'reason', cell: (w) => w.reason ?? '' },
];

function poolsView(): void {
  listen();
  redraw = async () => {
    const g = generation;
    const { pools, controller } = await api<PoolsAnswer>('/pools');
    if (g !== generation) return;
    main.replaceChildren(
      h('h1', {}, 'Pools'),
      controller
        ? ''
        : h('p', { class: 'muted' }, 'No controller here (drover ui): workers as the ledger last knew them.'),
      pools.length === 0 ? h('p', { class: 'muted' }, 'No pools: drover pool create NAME --workers N.') : '',
      ...pools.map((p) => {
        const alive = p.workers.filter((w) => w.state !== 'lost' && w.state !== 'stopped');
        const slots = alive.reduce((a, w) => a + w.slots, 0);
        const busy = alive.reduce((a, w) => a + (w.free_slots === null ? 0 : w.slots - w.free_slots), 0);
        const lost = p.workers.filter((w) => w.state === 'lost').length;
        return h(
          'section',
          { 'data-pool': p.name },
          h('h2', {}, `${p.name} `, h('span', { class: 'muted' }, `${p.backend}, ${p.state}`)),
          h(
            'dl',
            { class: 'kv' },
            h('dt', {}, 'workers'),
            h('dd', { 'data-testid': 'workers-live' }, `${alive.length} live of ${p.workers_wanted} wanted`),
            h('dt', {}, 'slots busy'),
            h('dd', {}, `${busy} of ${slots}`),
            h('dt', {}, 'tasks'),
            h('dd', {}, p.running === null ? '–' : `${p.running} running, ${p.queued} queued`),
            h('dt', {}, 'lost workers'),
            h('dd', {}, `${lost} (${p.workers_gone} gone in all)`),
            h('dt', {}, 'why workers went'),
            h('dd', {}, p.gone_reasons.join('; ') || '–'),
          ),
          dataTable('workers', WORKER_COLUMNS, p.workers, (w) => ({ 'data-worker': w.id })),
        );
      }),
    );
  };
}

void route();
