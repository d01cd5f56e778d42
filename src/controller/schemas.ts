import { MAX_REPORT_RECORDS } from '../protocol/messages.js';
import { COUNTS, MAX_JOB_TASKS, SECONDS } from '../util/limits.js';

/**
 * JSON schemas of the request bodies (Fastify validates every body against its route's schema before the
 * handler runs: a malformed body is a 400 naming the bad field, never a crash).
 */

const int = (min: number, max = 1_000_000_000) => ({ type: 'integer', minimum: min, maximum: max });
const str = (max = 4096) => ({ type: 'string', maxLength: max });
const name = { type: 'string', minLength: 1, maxLength: 64 };
const resources = {
  type: 'object',
  required: ['cpus', 'gpus', 'mem_mb'],
  properties: { cpus: int(1, 100_000), gpus: int(0, 1024), mem_mb: int(0) },
  additionalProperties: false,
};

/** A task a worker holds, with the attempt it runs (optional: workers of an earlier version do not say). */
const heldKey = {
  type: 'object',
  required: ['launch', 'task'],
  properties: { launch: int(1), task: int(1), attempt: int(1) },
  additionalProperties: false,
};

export const createPoolSchema = {
  type: 'object',
  required: ['name', 'backend', 'workers', 'cpus'],
  properties: {
    name,
    backend: { type: 'string', enum: ['local', 'slurm', 'gridengine'] },
    workers: int(0, 100_000),
    cpus: int(1, 100_000),
    gpus: int(0, 1024),
    mem: str(32),
    duration: { type: 'number', exclusiveMinimum: 0, maximum: SECONDS.limit.max },
    slots: int(1, 100_000),
    setup: str(),
    options: { type: 'object', additionalProperties: str(256), maxProperties: 16 },
    auto: {
      type: 'object',
      properties: {
        max_workers: int(COUNTS.workers.min, COUNTS.workers.max),
        min_workers: int(COUNTS.workersOrNone.min, COUNTS.workersOrNone.max),
        idle_timeout: { type: 'number', minimum: SECONDS.idleTimeout.min, maximum: SECONDS.idleTimeout.max },
        backlog: int(COUNTS.backlog.min, COUNTS.backlog.max),
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

export const scalePoolSchema = {
  type: 'object',
  required: ['workers'],
  properties: { workers: int(0, 100_000) },
  additionalProperties: false,
};

export const createLaunchSchema = {
  type: 'object',
  required: ['pool', 'cwd'],
  properties: {
    pool: name,
    jobname: str(200),
    jobfile: str(),
    tasklist: str(100_000),
    failed: { type: 'boolean' },
    unfinished: { type: 'boolean' },
    command: { type: 'string', minLength: 1, maxLength: 100_000 },
    num_jobs: int(1, MAX_JOB_TASKS),
    cpus: int(1, 100_000),
    gpus: int(0, 1024),
    mem: str(32),
    retries: int(0, 1000),
    retry_delay: { type: 'number', minimum: 0, maximum: 86_400 },
    task_timeout: { type: 'number', exclusiveMinimum: 0, maximum: SECONDS.limit.max },
    kill_grace: { type: 'number', minimum: 0, maximum: 3600 },
    signal: str(64),
    requeue: int(0, 1000),
    requeue_exit: int(1, 125),
    cwd: { type: 'string', minLength: 1, maxLength: 4096 },
    env: { type: 'object', additionalProperties: str(100_000), maxProperties: 1000 },
    argv: { type: 'array', items: str(100_000), maxItems: 10_000 },
    dry_run: { type: 'boolean' },
    result: { type: 'string', enum: ['file', 'stdout'] },
    logs: { type: 'string', enum: ['files', 'segments'] },
  },
  additionalProperties: false,
};

export const cancelSchema = {
  type: 'object',
  properties: { tasklist: str(100_000) },
  additionalProperties: false,
};

export const registerSchema = {
  type: 'object',
  required: ['pool', 'host', 'pid', 'resources', 'slots', 'setup', 'holding'],
  properties: {
    id: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
    secret: { type: 'string', minLength: 1, maxLength: 256 },
    pool: name,
    // Shown in tables: no control characters (a newline would forge a row).
    host: { type: 'string', pattern: '^[^\\u0000-\\u001f\\u007f]{1,256}$' },
    pid: int(1, 2 ** 31 - 1),
    resources,
    slots: int(1, 100_000),
    setup: { type: 'boolean' },
    holding: { type: 'array', items: heldKey, maxItems: 100_000 },
    element: { type: 'string', pattern: '^[0-9]{1,20}[_.][0-9]{1,10}$' },
  },
  dependencies: { id: ['secret'] },
  additionalProperties: false,
};

export const pollSchema = {
  type: 'object',
  required: ['wait'],
  properties: { wait: { type: 'number', minimum: 0, maximum: 120 } },
  additionalProperties: false,
};

/** Unix seconds, with room to spare either side of now. */
const time = { type: 'number', minimum: 0, maximum: 1e11 };

/**
 * The records a worker reports, every field checked (a bad one is a 400 naming it): what its runner writes
 * (src/protocol/records.ts). Host and log paths are taken only as text: the controller records its own.
 */
const startRecord = {
  type: 'object',
  required: ['type', 'task', 'attempt', 'at', 'pid', 'slot', 'gpus', 'host', 'out', 'err'],
  properties: {
    type: { const: 'start' },
    task: int(1),
    attempt: int(1),
    at: time,
    pid: int(0, 2 ** 31 - 1),
    slot: int(-1, 100_000),
    gpus: { type: ['string', 'null'], maxLength: 4096 },
    host: str(256),
    out: str(),
    err: str(),
    // Output in segments: where the attempt begins in its slot's segments (the paths are the controller's).
    out_off: int(0, Number.MAX_SAFE_INTEGER),
    err_off: int(0, Number.MAX_SAFE_INTEGER),
    seq: int(0, Number.MAX_SAFE_INTEGER),
  },
  additionalProperties: false,
};
const endRecord = {
  type: 'object',
  required: ['type', 'task', 'attempt', 'at', 'state', 'exit_code', 'signal'],
  properties: {
    type: { const: 'end' },
    task: int(1),
    attempt: int(1),
    at: time,
    // What a worker's runner can end an attempt with (lost and error are the controller's to say).
    state: { type: 'string', enum: ['succeeded', 'failed', 'killed', 'timeout', 'cancelled'] },
    exit_code: { type: ['integer', 'null'], minimum: -(2 ** 31), maximum: 2 ** 31 - 1 },
    signal: { type: ['string', 'null'], maxLength: 32 },
    reason: str(1000),
    out_end: int(0, Number.MAX_SAFE_INTEGER),
    err_end: int(0, Number.MAX_SAFE_INTEGER),
  },
  additionalProperties: false,
};
const skipRecord = {
  type: 'object',
  required: ['type', 'task', 'at', 'state'],
  properties: {
    type: { const: 'skip' },
    task: int(1),
    at: time,
    state: { const: 'cancelled' },
  },
  additionalProperties: false,
};
const record = {
  type: 'object',
  required: ['type'],
  discriminator: { propertyName: 'type' },
  oneOf: [startRecord, endRecord, skipRecord],
};

export const reportSchema = {
  type: 'object',
  required: ['batches'],
  properties: {
    batches: {
      type: 'array',
      maxItems: MAX_REPORT_RECORDS,
      items: {
        type: 'object',
        required: ['seq', 'launch', 'records'],
        properties: {
          seq: int(1, Number.MAX_SAFE_INTEGER),
          launch: int(1),
          records: { type: 'array', items: record, maxItems: MAX_REPORT_RECORDS },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
};

export const emptySchema = {
  type: 'object',
  maxProperties: 0,
};

export const leaveSchema = {
  type: 'object',
  required: ['reason'],
  properties: { reason: str(1000) },
  additionalProperties: false,
};

/** The dashboard's login: a user token, exchanged for a session. */
export const loginSchema = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', maxLength: 200 } },
  additionalProperties: false,
};

/** The dashboard's cancel of a job: all of its tasks, or a tasklist of them. */
export const dashboardCancelSchema = {
  type: 'object',
  properties: { tasklist: { type: 'string', minLength: 1, maxLength: 100_000 } },
  additionalProperties: false,
};
