import type { Ledger } from '../ledger/ledger.js';
import {
  attemptStarted,
  cancelDone,
  freshTasks,
  getPoolLaunch,
  heldTasks,
  launchJob,
  launchTaskTally,
  openPoolLaunchIds,
  pendingCancels,
  poolTask,
  poolTaskRequeues,
  taskCommand,
  waitingTasks,
} from '../ledger/pool-launches.js';
import {
  getWorkerRow,
  insertWorker,
  liveWorkerRows,
  setWorkerSeq,
  setWorkerState,
  updateWorker,
  workerIdTaken,
  workerSeq,
} from '../ledger/pool-workers.js';
import {
  applyWorkerRecords,
  assignTask,
  closePoolLaunchIfDone,
  expandLaunch,
  finishTask,
  loseUnreported,
  markLost,
  markRequeued,
  requeueForRetry,
  requeueQueued,
  unassign,
} from '../ledger/transitions.js';
import type { ControllerStore } from './ports.js';
import { newWorkerId } from './worker-secret.js';

/**
 * The controller's store on the ledger: every read is a ledger query and every change a named ledger
 * transition — no SQL here. The store interface (ports.ts) is the controller's, shaped by its decisions; the
 * ledger below knows nothing of the controller's in-memory state.
 */
export function ledgerStore(ledger: Ledger): ControllerStore {
  const launch = (l: { id: number; jobId: number }) => ({ id: l.id, job_id: l.jobId });
  return {
    transaction: (fn) => ledger.write(fn),
    openLaunches: () => openPoolLaunchIds(ledger),
    poolLaunch(id) {
      const row = getPoolLaunch(ledger, id);
      if (!row) return undefined;
      const job = launchJob(ledger, id);
      return { row, jobId: job.id, job: job.name };
    },
    tally: (id) => launchTaskTally(ledger, id),
    waiting: (id) =>
      waitingTasks(ledger, id).map((r) => ({
        task: r.task_id,
        attempt: r.attempt,
        tries: r.tries,
        notBefore: r.not_before,
      })),
    held: () =>
      heldTasks(ledger).map((h) => ({
        launch: h.launch_id,
        task: h.task_id,
        attempt: h.attempt,
        worker: h.worker!,
      })),
    expand: (id, limit) => expandLaunch(ledger, id, limit),
    freshTasks: (l, after, limit) => freshTasks(ledger, l.jobId, l.id, after, limit),
    command: (l, task) => taskCommand(ledger, l.jobId, task),
    started: (l, task, attempt) => attemptStarted(ledger, l.jobId, task, attempt),
    poolTask: (l, task) => poolTask(ledger, l.id, task),
    requeues: (l, task) => poolTaskRequeues(ledger, l.jobId, l.id, task),

    assign: (l, t, worker) => assignTask(ledger, l.id, t, worker).kind === 'applied',
    requeue(l, task, nextAttempt, notBefore) {
      requeueForRetry(ledger, l.jobId, l.id, task, nextAttempt, notBefore);
    },
    markRequeued(l, task, attempt) {
      markRequeued(ledger, l.jobId, l.id, task, attempt);
    },
    requeueQueued(l, task, nextAttempt) {
      requeueQueued(ledger, l.id, task, nextAttempt);
    },
    unassign(l, task) {
      unassign(ledger, l.id, task);
    },
    loseUnreported(l, t) {
      return loseUnreported(ledger, l.jobId, l.id, t).kind === 'applied';
    },
    finish(l, task) {
      finishTask(ledger, l.id, task);
    },
    markLost(l, task, reason) {
      markLost(ledger, l.jobId, l.id, task, reason);
    },
    applyRecords: (l, records) => applyWorkerRecords(ledger, launch(l), records),
    closeIfDone: (l) => closePoolLaunchIfDone(ledger, l.id),

    worker: (id) => getWorkerRow(ledger, id),
    liveWorkers: () => liveWorkerRows(ledger),
    newWorkerId: (host, pid, secret) => newWorkerId((id) => workerIdTaken(ledger, id), host, pid, secret),
    addWorker: (row, now) => insertWorker(ledger, row, now),
    updateWorker: (id, f, now) => updateWorker(ledger, id, f, now),
    setWorkerState: (id, state, reason) => setWorkerState(ledger, id, state, reason),
    workerSeq: (id) => workerSeq(ledger, id),
    setWorkerSeq: (id, seq, now) => setWorkerSeq(ledger, id, seq, now),

    pendingCancels: () =>
      pendingCancels(ledger).map((r) => ({
        id: r.id,
        launch: r.launch_id,
        tasks: JSON.parse(r.tasks) as number[] | 'all',
      })),
    cancelDone: (id) => cancelDone(ledger, id),
  };
}
