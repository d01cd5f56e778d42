// The jobs page: every job, its tasks' states, how far it got, its launches.
import type { JobSummary, JobsAnswer } from '../../src/protocol/dashboard.js';
import { STATES } from '../../src/protocol/states.js';
import { api, enc } from '../api.js';
import { type Column, dataTable, h, morph } from '../dom.js';
import { fmtAgo, fmtTime } from '../format.js';
import { generation, listen, main, setRedraw } from '../page.js';
import { stateBar } from '../states.js';

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

/** Show the jobs page (drawn when its stream is live). */
export function jobsView(): void {
  listen();
  setRedraw(async () => {
    const g = generation;
    const { jobs } = await api<JobsAnswer>('/jobs');
    if (g !== generation) return;
    morph(
      main,
      h('h1', {}, 'Jobs'),
      jobs.length === 0
        ? h('p', { class: 'muted' }, 'No jobs yet: drover prelaunch … then drover launch.')
        : dataTable('jobs', JOB_COLUMNS, jobs, (j) => ({ 'data-job': j.name })),
    );
  });
}
