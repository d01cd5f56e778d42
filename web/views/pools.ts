// The pools page: each pool's workers, slots and tasks, and why workers went.
import type { PoolsAnswer, PoolWorker } from '../../src/protocol/dashboard.js';
import { api } from '../api.js';
import { type Column, dataTable, h, morph } from '../dom.js';
import { generation, listen, main, setRedraw } from '../page.js';

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

/** Show the pools page (drawn when its stream is live). */
export function poolsView(): void {
  listen();
  setRedraw(async () => {
    const g = generation;
    const { pools, controller } = await api<PoolsAnswer>('/pools');
    if (g !== generation) return;
    morph(
      main,
      h('h1', {}, 'Pools'),
      controller
        ? ''
        : h('p', { class: 'muted' }, 'No controller here (drover ui): workers as the ledger last knew them.'),
      pools.length === 0 ? h('p', { class: 'muted' }, 'No pools: drover pool create NAME --workers N.') : '',
      ...pools.map((p) => {
        const workers: PoolWorker[] = p.workers;
        const alive = workers.filter((w) => w.state !== 'lost' && w.state !== 'stopped');
        const slots = alive.reduce((a, w) => a + w.slots, 0);
        const busy = alive.reduce((a, w) => a + (w.free_slots === null ? 0 : w.slots - w.free_slots), 0);
        const lost = workers.filter((w) => w.state === 'lost').length;
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
          dataTable('workers', WORKER_COLUMNS, workers, (w) => ({ 'data-worker': w.id })),
        );
      }),
    );
  });
}
