import { STATES_SQL } from './states.js';

/**
 * Numbered migrations: entry i brings the schema from version i to i+1 (PRAGMA user_version). Never edit a
 * migration that has shipped; add a new one.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY,         -- internal id
    name        TEXT NOT NULL UNIQUE,        -- the jobname
    created_at  REAL NOT NULL,               -- unix seconds
    task_count  INTEGER NOT NULL DEFAULT 0,  -- tasks 1..task_count exist
    jobfile     TEXT NOT NULL,               -- path of its jobs.json (onager's format)
    jobfile_mtime REAL                       -- mtime of jobs.json when last read into tasks
  );
  CREATE TABLE tasks (
    job_id      INTEGER NOT NULL REFERENCES jobs(id),
    id          INTEGER NOT NULL,            -- task id, 1..N
    command     TEXT NOT NULL,
    tag         TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'pending' CHECK (state IN (${STATES_SQL})),
    exit_code   INTEGER,                     -- exit code of the latest attempt, if it exited
    attempts    INTEGER NOT NULL DEFAULT 0,  -- attempts started so far, all launches
    last_launch_id INTEGER,                  -- the newest launch that included this task
    PRIMARY KEY (job_id, id)
  ) WITHOUT ROWID;
  CREATE INDEX tasks_state ON tasks (job_id, state);
  CREATE TABLE launches (
    id          INTEGER PRIMARY KEY,
    job_id      INTEGER NOT NULL REFERENCES jobs(id),
    backend     TEXT NOT NULL,               -- local | slurm | gridengine | pool:NAME
    tasklist    TEXT NOT NULL,               -- condensed tasklist of the tasks it includes
    task_count  INTEGER NOT NULL,
    created_at  REAL NOT NULL,
    dir         TEXT NOT NULL,               -- launch folder under .drover/jobs/<job>/launches/
    options     TEXT NOT NULL,               -- JSON: resources, retries, slots ...
    handles     TEXT NOT NULL DEFAULT '{}',  -- JSON: backend handles (runner pid, array ids, ...)
    open        INTEGER NOT NULL DEFAULT 1,  -- 1 while some of its tasks may still change state
    first_start REAL,                        -- when its first attempt started (kept by ingestion)
    last_end    REAL,                        -- when its last attempt so far ended
    busy        REAL NOT NULL DEFAULT 0      -- seconds its attempts ran, summed
  );
  CREATE INDEX launches_job ON launches (job_id, id);
  CREATE TABLE launch_tasks (
    launch_id   INTEGER NOT NULL REFERENCES launches(id),
    task_id     INTEGER NOT NULL,
    state       TEXT NOT NULL DEFAULT 'queued' CHECK (state IN (${STATES_SQL})),
    PRIMARY KEY (launch_id, task_id)
  ) WITHOUT ROWID;
  CREATE TABLE attempts (
    job_id      INTEGER NOT NULL,
    task_id     INTEGER NOT NULL,
    attempt     INTEGER NOT NULL,            -- 1 for the task's first attempt ever, counting across launches
    launch_id   INTEGER NOT NULL REFERENCES launches(id),
    state       TEXT NOT NULL CHECK (state IN (${STATES_SQL})),
    exit_code   INTEGER,                     -- set when the process exited
    signal      TEXT,                        -- set when a signal ended it (SIGKILL, ...)
    started_at  REAL,                        -- unix seconds
    ended_at    REAL,
    host        TEXT,
    slot        INTEGER,                     -- runner slot, 0-based
    gpus        TEXT,                        -- CUDA_VISIBLE_DEVICES given to it
    pid         INTEGER,
    stdout_path TEXT,
    stderr_path TEXT,
    reason      TEXT,                        -- why it ended so, when known (e.g. scheduler reason)
    duration    REAL GENERATED ALWAYS AS (ended_at - started_at) VIRTUAL,
    PRIMARY KEY (job_id, task_id, attempt)
  ) WITHOUT ROWID;
  CREATE INDEX attempts_launch ON attempts (launch_id, task_id);
  CREATE INDEX attempts_duration ON attempts (job_id, duration);
  CREATE TABLE runners (
    launch_id   INTEGER NOT NULL REFERENCES launches(id),
    name        TEXT NOT NULL,               -- unique within the launch (group and host/pid)
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    pid_start   TEXT,                        -- process start time, to tell a reused pid
    started_at  REAL NOT NULL,
    ended_at    REAL,
    PRIMARY KEY (launch_id, name)
  );
  CREATE TABLE runner_files (
    launch_id   INTEGER NOT NULL REFERENCES launches(id),
    path        TEXT PRIMARY KEY,            -- a runner's record file
    runner      TEXT NOT NULL                -- the runner that writes it
  );
  CREATE TABLE ingested (
    path        TEXT PRIMARY KEY,            -- a runner's record file
    offset      INTEGER NOT NULL             -- bytes already applied
  );
  CREATE TABLE history (
    id          INTEGER PRIMARY KEY,
    at          REAL NOT NULL,
    kind        TEXT NOT NULL,               -- prelaunch | launch | cancel
    jobname     TEXT,
    argv        TEXT NOT NULL,               -- JSON array of the arguments after 'drover'
    cwd         TEXT NOT NULL,
    dry_run     INTEGER NOT NULL DEFAULT 0,
    launch_id   INTEGER
  );
  `,
];
