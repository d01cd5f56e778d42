import { hostName } from '../state.js';

/**
 * The FAKE Grid Engine cell: one host like the test cluster of scripts/test-cluster/gridengine-up.sh (queue
 * `all.q` of 32 slots, parallel environment `smp`, Son of Grid Engine 8.1.9's standard complexes), with settings a
 * test may change through the environment of the commands (qsub passes it on to the job's controller):
 *
 * - DROVER_FAKE_GE_MAX_AJ_TASKS — max_aj_tasks of the global configuration (default 75000);
 * - DROVER_FAKE_GE_NOTIFY — the queue's notify time, seconds from SIGUSR2 to SIGKILL under -notify (default 60);
 * - DROVER_FAKE_GE_ACCT_DELAY_MS — how long after an element leaves qstat qacct knows it (default 500; the test
 *   cluster takes 0.4–1.2 s).
 */

export const QUEUE = 'all.q';
export const PARALLEL_ENVIRONMENTS = ['smp'];
export const SLOTS = 32;

/** The complexes of the test cluster (`qconf -sc`): requests for other resources are refused. */
export const COMPLEXES = new Set(
  (
    'arch calendar cpu display_win_gui h_core h_cpu h_data h_fsize h_rss h_rt h_stack h_vmem hostname load_avg ' +
    'load_long load_medium load_short m_core m_socket m_thread m_topology m_topology_inuse mem_free mem_total ' +
    'mem_used min_cpu_interval np_load_avg np_load_long np_load_medium np_load_short num_proc qname rerun s_core ' +
    's_cpu s_data s_fsize s_rss s_rt s_stack s_vmem seq_no slots swap_free swap_rate swap_rsvd swap_total ' +
    'swap_used tmpdir virtual_free virtual_total virtual_used'
  ).split(' '),
);

/** Complexes whose values are times (refused unless they parse as one). */
export const TIME_COMPLEXES = new Set(['h_rt', 's_rt', 'h_cpu', 's_cpu']);

/** max_aj_tasks of the fake cell. */
export function maxArrayTasks(env: NodeJS.ProcessEnv = process.env): number {
  return Number(env.DROVER_FAKE_GE_MAX_AJ_TASKS ?? 75000);
}

/** The queue's notify time in seconds. */
export function notifySeconds(env: NodeJS.ProcessEnv = process.env): number {
  return Number(env.DROVER_FAKE_GE_NOTIFY ?? 60);
}

/** Milliseconds before qacct shows an ended element. */
export function accountingDelayMs(env: NodeJS.ProcessEnv = process.env): number {
  return Number(env.DROVER_FAKE_GE_ACCT_DELAY_MS ?? 500);
}

/** Seconds of a Grid Engine time value (`90`, `0:1:30`, `1:30:00`); undefined when it is not one. */
export function parseTime(text: string): number | undefined {
  if (!/^\d+(:\d+){0,2}$/.test(text)) return undefined;
  const parts = text.split(':').map(Number);
  return parts.reduce((s, p) => s * 60 + p, 0);
}

/** What every client prints when sge_qmaster cannot be reached (the test cluster with its qmaster stopped). */
export const QMASTER_DOWN =
  'error: commlib error: got select error (Connection refused)\n' +
  `error: unable to send message to qmaster using port 6444 on host "${hostName()}": got send error\n`;
