// How a task's state shows: a badge, a bar of a count of each state, chips of the counts.
import { STATES } from '../src/protocol/states.js';
import { h } from './dom.js';

/** A state as a coloured badge. */
export const stateBadge = (s: string) => h('span', { class: `state ${s}`, 'data-state': s }, s);

/** A bar whose parts are each state's share of `total` (its hover text the counts). */
export function stateBar(counts: Record<string, number>, total: number): HTMLElement {
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

/** A badge and a count for each state some task is in. */
export function countChips(counts: Record<string, number>): HTMLElement {
  return h(
    'div',
    { class: 'counts', 'data-testid': 'counts' },
    ...STATES.filter((s) => counts[s]).map((s) =>
      h('span', { 'data-count': s }, stateBadge(s), ' ', h('b', {}, counts[s] ?? 0)),
    ),
  );
}
