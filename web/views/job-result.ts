// A job page's result chart: a numeric result field (of the rows shown) against a param, both chosen in selects.
import type { ChartAnswer, JobAnswer, TaskPageRow } from '../../src/protocol/dashboard.js';
import { api, enc } from '../api.js';
import { resultChart } from '../charts.js';
import { h } from '../dom.js';
import { safeRedraw } from '../page.js';

/** What each box shows now (its fields, params, choice and chart), to draw it only when that changes. */
const drawn = new WeakMap<HTMLElement, string>();

/**
 * Draw the chart of `choice.field` against `choice.param` into `box` (the first of each when the choice is not
 * there; nothing when the rows have no numeric field or the job no params). A select's change redraws.
 */
export async function drawResultChart(
  job: JobAnswer,
  rows: TaskPageRow[],
  choice: { field: string; param: string },
  box: HTMLElement,
): Promise<void> {
  const fields = [
    ...new Set(
      rows.flatMap((r) =>
        r.result ? Object.keys(r.result).filter((k) => typeof r.result?.[k] === 'number') : [],
      ),
    ),
  ];
  if (fields.length === 0 || job.params.length === 0) {
    drawn.delete(box);
    box.replaceChildren();
    return;
  }
  if (!fields.includes(choice.field)) choice.field = fields[0] as string;
  if (!job.params.includes(choice.param)) choice.param = job.params[0] as string;
  const fieldSel = h(
    'select',
    { 'data-testid': 'chart-field' },
    ...fields.map((f) => h('option', { value: f, selected: f === choice.field }, f)),
  );
  const paramSel = h(
    'select',
    { 'data-testid': 'chart-param' },
    ...job.params.map((p) => h('option', { value: p, selected: p === choice.param }, p)),
  );
  fieldSel.addEventListener('change', () => {
    choice.field = fieldSel.value;
    void safeRedraw();
  });
  paramSel.addEventListener('change', () => {
    choice.param = paramSel.value;
    void safeRedraw();
  });
  const chart = await api<ChartAnswer>(
    `/jobs/${enc(job.name)}/chart?field=${enc(choice.field)}&param=${enc(choice.param)}`,
  );
  // Drawn again only when it would differ: an open select or a hovered chart stays through live updates.
  const sig = JSON.stringify([fields, job.params, choice.field, choice.param, chart]);
  if (drawn.get(box) === sig) return;
  drawn.set(box, sig);
  const body = h('div', {});
  box.replaceChildren(
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
  resultChart(chart, choice.param, choice.field, body);
}
