import { STATES_SQL } from '../protocol/states.js';

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
  -- Counts of tasks per state, per job and per launch, kept by triggers in the same transaction as every
  -- change: drover status of a 100,000-task job reads ten rows instead of counting 100,000.
  CREATE TABLE job_counts (
    job_id      INTEGER NOT NULL,
    state       TEXT NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (job_id, state)
  ) WITHOUT ROWID;
  CREATE TABLE launch_counts (
    launch_id   INTEGER NOT NULL,
    state       TEXT NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (launch_id, state)
  ) WITHOUT ROWID;
  CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO job_counts VALUES (new.job_id, new.state, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER tasks_count_update AFTER UPDATE OF state ON tasks WHEN old.state != new.state BEGIN
    UPDATE job_counts SET n = n - 1 WHERE job_id = old.job_id AND state = old.state;
    INSERT INTO job_counts VALUES (new.job_id, new.state, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN
    UPDATE job_counts SET n = n - 1 WHERE job_id = old.job_id AND state = old.state;
  END;
  CREATE TRIGGER launch_tasks_count_insert AFTER INSERT ON launch_tasks BEGIN
    INSERT INTO launch_counts VALUES (new.launch_id, new.state, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER launch_tasks_count_update AFTER UPDATE OF state ON launch_tasks WHEN old.state != new.state BEGIN
    UPDATE launch_counts SET n = n - 1 WHERE launch_id = old.launch_id AND state = old.state;
    INSERT INTO launch_counts VALUES (new.launch_id, new.state, 1) ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER launch_tasks_count_delete AFTER DELETE ON launch_tasks BEGIN
    UPDATE launch_counts SET n = n - 1 WHERE launch_id = old.launch_id AND state = old.state;
  END;
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
  // 2: pools and the controller (drover server). See docs/pools.md.
  `
  CREATE TABLE server_tokens (
    id          TEXT PRIMARY KEY,            -- public part of the token (drv_<id>_<secret>)
    hash        TEXT NOT NULL,               -- sha256 of the whole token, hex
    kind        TEXT NOT NULL CHECK (kind IN ('user', 'worker')),
    pool        TEXT,                        -- worker tokens: the only pool it may serve (NULL: any)
    name        TEXT NOT NULL,               -- what it is for, for people
    created_at  REAL NOT NULL,
    revoked_at  REAL                         -- set when revoked: the token is refused from then on
  );
  CREATE TABLE pools (
    name        TEXT PRIMARY KEY,
    backend     TEXT NOT NULL CHECK (backend IN ('local', 'slurm', 'gridengine')),
    workers     INTEGER NOT NULL,            -- workers wanted
    cpus        INTEGER NOT NULL,            -- per worker
    gpus        INTEGER NOT NULL DEFAULT 0,  -- per worker
    mem_mb      INTEGER NOT NULL DEFAULT 0,  -- per worker, 0: not tracked
    duration    REAL,                        -- seconds each worker may live (scheduler time limit)
    slots       INTEGER NOT NULL,            -- tasks at once per worker
    setup       TEXT,                        -- command run once per worker before it takes tasks
    state       TEXT NOT NULL CHECK (state IN ('up', 'down')),
    created_at  REAL NOT NULL,
    handles     TEXT NOT NULL DEFAULT '[]',  -- JSON: what started its workers (pids, array job ids)
    options     TEXT NOT NULL DEFAULT '{}'   -- JSON: partition, account, ...
  );
  CREATE TABLE pool_workers (
    id          TEXT PRIMARY KEY,            -- chosen by the worker, kept across reconnects
    pool        TEXT NOT NULL,
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    cpus        INTEGER NOT NULL,
    gpus        INTEGER NOT NULL,
    mem_mb      INTEGER NOT NULL,
    slots       INTEGER NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('setup', 'ready', 'draining', 'lost', 'stopped')),
    registered_at REAL NOT NULL,
    last_seen   REAL NOT NULL,               -- last request from it (heartbeat, poll, report)
    seq         INTEGER NOT NULL DEFAULT 0,  -- last report sequence number applied (replays are skipped)
    reason      TEXT                         -- why it is lost or stopped
  );
  CREATE INDEX pool_workers_pool ON pool_workers (pool, state);
  CREATE TABLE pool_launches (
    launch_id   INTEGER PRIMARY KEY REFERENCES launches(id),
    pool        TEXT NOT NULL,
    tasklist    TEXT NOT NULL,               -- the launch's task ids (tasklist grammar)
    total       INTEGER NOT NULL,            -- how many
    num_jobs    INTEGER,                     -- --num-jobs N: tasks get DROVER_JOB_RANK and DROVER_NUM_JOBS
    expanded    INTEGER NOT NULL DEFAULT 0,  -- launch_tasks rows exist for the task ids <= this
    cursor      INTEGER NOT NULL DEFAULT 0,  -- task ids <= this were handed out at least once
    cpus        INTEGER NOT NULL DEFAULT 1,  -- per task
    gpus        INTEGER NOT NULL DEFAULT 0,  -- per task
    mem_mb      INTEGER NOT NULL DEFAULT 0,  -- per task
    retries     INTEGER NOT NULL DEFAULT 0,
    retry_delay REAL NOT NULL DEFAULT 1,
    settings    TEXT NOT NULL                -- JSON: what each worker's runner needs (RunSettings)
  );
  CREATE TABLE pool_tasks (
    launch_id   INTEGER NOT NULL,
    task_id     INTEGER NOT NULL,
    attempt     INTEGER NOT NULL,            -- the attempt number it runs (or will run) as
    tries       INTEGER NOT NULL,            -- attempts so far in this launch, this one included
    worker      TEXT,                        -- the worker it was handed to; NULL while waiting to retry
    not_before  REAL NOT NULL DEFAULT 0,     -- waiting to retry: not before this time
    PRIMARY KEY (launch_id, task_id)
  ) WITHOUT ROWID;
  CREATE INDEX pool_tasks_worker ON pool_tasks (worker);
  CREATE TABLE pool_cancels (
    id          INTEGER PRIMARY KEY,
    launch_id   INTEGER NOT NULL,
    tasks       TEXT NOT NULL,               -- JSON: task ids, or "all"
    at          REAL NOT NULL,
    done        INTEGER NOT NULL DEFAULT 0   -- 1 once the controller acted on it
  );
  `,
  // 3: a task's state belongs to the command it has now (docs/concepts.md invariant 1). A task whose command changes gets
  // a new revision and starts again as pending; its earlier commands stay in task_revisions, and the attempts
  // they ran stay as their history (launch_tasks.revision says which command a launch ran).
  `
  ALTER TABLE jobs ADD COLUMN generation INTEGER NOT NULL DEFAULT 1;   -- bumped by each sync that changes commands
  ALTER TABLE jobs ADD COLUMN max_task INTEGER NOT NULL DEFAULT 0;     -- the highest task id (ids may have gaps)
  ALTER TABLE jobs ADD COLUMN jobfile_stamp TEXT;                      -- mtime:size:inode of jobs.json when last read
  UPDATE jobs SET max_task = task_count;
  ALTER TABLE jobs DROP COLUMN jobfile_mtime;
  ALTER TABLE tasks ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;    -- the job generation that gave it its command
  ALTER TABLE tasks ADD COLUMN tries INTEGER NOT NULL DEFAULT 0;       -- attempts of its current command
  UPDATE tasks SET tries = attempts;
  ALTER TABLE launch_tasks ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;  -- the task revision this launch ran
  CREATE TABLE task_revisions (
    job_id      INTEGER NOT NULL,
    task_id     INTEGER NOT NULL,
    revision    INTEGER NOT NULL,            -- the revision that had this command
    command     TEXT NOT NULL,
    tag         TEXT NOT NULL,
    replaced_at REAL NOT NULL,               -- unix seconds: when the jobfile stopped holding it
    PRIMARY KEY (job_id, task_id, revision)
  ) WITHOUT ROWID;
  `,
  // 4: pools you can trust. A worker's id is issued by the controller and bound to a session secret only that
  // worker holds (its sha256 here); a worker started in a scheduler array element says which one, so scaling can
  // count the workers still on their way. See docs/pools.md.
  `
  ALTER TABLE pool_workers ADD COLUMN secret_hash TEXT;   -- sha256 of the worker's session secret, hex
  ALTER TABLE pool_workers ADD COLUMN element TEXT;       -- the scheduler array element it runs in (A_I, J.T)
  `,
  // 5: each task's sweep values (issue 12), as prelaunch recorded them for the command the task has now; '{}' for
  // a job made by onager or by hand. A sync sets them with the command, so they can never outlive it.
  `
  ALTER TABLE tasks ADD COLUMN params TEXT NOT NULL DEFAULT '{}';      -- JSON object of strings: {"--lr": "0.1"}
  `,
  // 6: output in slot segments (issue 14, --logs segments): an attempt's stdout and stderr are byte ranges of its
  // slot's segment files (stdout_path, stderr_path), its number in the segments' index beside them. All NULL for
  // an attempt with its own log files (the whole file is its output). See src/protocol/log-slices.ts.
  `
  ALTER TABLE attempts ADD COLUMN stdout_off INTEGER;   -- where its stdout begins in stdout_path
  ALTER TABLE attempts ADD COLUMN stdout_end INTEGER;   -- where it ends (exclusive); NULL while it runs
  ALTER TABLE attempts ADD COLUMN stderr_off INTEGER;
  ALTER TABLE attempts ADD COLUMN stderr_end INTEGER;
  ALTER TABLE attempts ADD COLUMN log_seq INTEGER;      -- its entry in the segments' index
  `,
  // 7: the state index holds only tasks that left pending (issue 14: a million-task prelaunch spent a sixth of its
  // time filling it with rows no query looks up there). A query may use it only when its WHERE says
  // state != 'pending' in so many words; pending tasks are found by the job's range of the primary key.
  `
  DROP INDEX tasks_state;
  CREATE INDEX tasks_state ON tasks (job_id, state) WHERE state != 'pending';
  `,
  // 8: an attempt's duration is a plain column its writers set, which a CHECK holds to its end minus its start
  // (issue 14: \`status\` of 100,000 tasks spent 0.12 s reading every duration to rank them). SQLite takes a query
  // that names a generated column (VIRTUAL or STORED) to use every column of the row, so attempts_duration could
  // never answer alone: counting or ranking 100,000 attempts along it looked each row up. On a plain column the
  // index answers alone (a count or a rank among 100,000 in a few ms). SQLite cannot change what a column is in
  // place: the table is made anew with the same columns in the same order, and its rows copied.
  `
  CREATE TABLE attempts_new (
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
    duration    REAL CHECK (duration IS ended_at - started_at),  -- seconds; NULL until both ends are known
    stdout_off  INTEGER,                     -- where its stdout begins in stdout_path (schema 6)
    stdout_end  INTEGER,                     -- where it ends (exclusive); NULL while it runs
    stderr_off  INTEGER,
    stderr_end  INTEGER,
    log_seq     INTEGER,                     -- its entry in the segments' index
    PRIMARY KEY (job_id, task_id, attempt)
  ) WITHOUT ROWID;
  INSERT INTO attempts_new (job_id, task_id, attempt, launch_id, state, exit_code, signal, started_at, ended_at,
      host, slot, gpus, pid, stdout_path, stderr_path, reason, duration, stdout_off, stdout_end, stderr_off,
      stderr_end, log_seq)
    SELECT job_id, task_id, attempt, launch_id, state, exit_code, signal, started_at, ended_at,
      host, slot, gpus, pid, stdout_path, stderr_path, reason, ended_at - started_at, stdout_off, stdout_end,
      stderr_off, stderr_end, log_seq
    FROM attempts ORDER BY job_id, task_id, attempt;
  DROP TABLE attempts;
  ALTER TABLE attempts_new RENAME TO attempts;
  CREATE INDEX attempts_launch ON attempts (launch_id, task_id);
  CREATE INDEX attempts_duration ON attempts (job_id, duration);
  `,
  // 9: each task keeps its latest attempt's start, end, duration and host as the JSON members \`list --json\` prints
  // (issue 12: 100,000 tasks within 3x \`drover --version\`; the join to the attempts and formatting their REALs
  // as text were a third of it). NULL when it has no latest attempt. The transitions keep it: see
  // src/ledger/latest-attempt.ts, whose LATEST_MEMBERS this text is.
  `
  ALTER TABLE tasks ADD COLUMN latest TEXT;
  UPDATE tasks SET latest = (SELECT rtrim(substr(json_object('started_at', a.started_at, 'ended_at', a.ended_at,
      'duration_s', round(a.duration, 3), 'host', a.host), 2), '}') FROM attempts a
    WHERE a.job_id = tasks.job_id AND a.task_id = tasks.id AND a.attempt = tasks.attempts
      AND a.launch_id = tasks.last_launch_id)
  WHERE last_launch_id IS NOT NULL;
  `,
  // 10: what a reconciliation has seen of a launch's elements (Grid Engine: when an element was first seen in Eqw
  // without a reason, or gone from qstat with tasks unaccounted for) is kept apart from its handles, which only the
  // launch writes (issue 33). Moved out of the handles of the launches that had them.
  `
  ALTER TABLE launches ADD COLUMN sightings TEXT NOT NULL DEFAULT '{}';
  UPDATE launches SET
    sightings = (SELECT json_group_object(key, json(value)) FROM json_each(launches.handles)
      WHERE key IN ('eqw', 'gone')),
    handles = json_remove(handles, '$.eqw', '$.gone')
  WHERE json_valid(handles) AND json_type(handles) = 'object'
    AND (json_type(handles, '$.eqw') IS NOT NULL OR json_type(handles, '$.gone') IS NOT NULL);
  `,
  // 11: \`--requeue\` (issue 34): an attempt the runner ran again because it hit its time limit or checkpointed
  // is marked so, and each task counts its requeues (all launches), apart from its attempts and retries.
  `
  ALTER TABLE attempts ADD COLUMN requeued INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX attempts_requeued ON attempts (launch_id) WHERE requeued = 1;
  ALTER TABLE tasks ADD COLUMN requeues INTEGER NOT NULL DEFAULT 0;
  `,
  // 12: automatic allocation for pools (issue 35): a pool's \`--auto\` settings, and each allocation (one array job
  // of workers) the controller submitted for it, with what became of it.
  `
  ALTER TABLE pools ADD COLUMN auto TEXT;      -- JSON AutoSettings when the pool allocates by itself, else NULL
  CREATE TABLE pool_allocations (
    id          INTEGER PRIMARY KEY,
    pool        TEXT NOT NULL,
    job         TEXT,                        -- the scheduler's array job id; NULL when the submission was refused
    workers     INTEGER NOT NULL,            -- array elements, one worker each
    submitted_at REAL NOT NULL,              -- unix seconds
    state       TEXT NOT NULL CHECK (state IN ('queued', 'running', 'finished', 'failed')),
    reason      TEXT,                        -- why it failed, or was withdrawn
    ended_at    REAL,                        -- when it was seen finished or failed
    counted     INTEGER NOT NULL DEFAULT 1   -- 0: a failure \`pool resume\` forgave (no longer pauses the pool)
  );
  CREATE INDEX pool_allocations_pool ON pool_allocations (pool, id);
  `,
];
