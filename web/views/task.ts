// A task's page: its command, params and result; its attempts; the end of one attempt's logs.
import type { AttemptRow, CancelAnswer, LogTail, TaskAnswer } from '../../src/protocol/dashboard.js';
import { api, enc } from '../api.js';
import { type Column, dataTable, h, morph } from '../dom.js';
import { fmtDur, fmtTime } from '../format.js';
import { act, generation, listen, main, me, safeRedraw, setRedraw } from '../page.js';
import { stateBadge } from '../states.js';

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

/** One log's end, under a head that says where it is and how much of it shows. */
function logBox(name: string, tail: LogTail): HTMLElement {
  return h(
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
}

/** Show task `id` of `job` (drawn when its stream is live; read again every second while it runs). */
export function taskView(job: string, id: number): void {
  listen(job);
  let pinned: number | undefined;
  let poll: number | undefined;
  const g0 = generation;
  setRedraw(async () => {
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
    morph(
      main,
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
      logBox('stderr', t.stderr),
      logBox('stdout', t.stdout),
    );
  });
}
