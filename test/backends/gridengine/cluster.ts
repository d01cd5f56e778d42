import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { parseQstatXml } from '../../../src/backends/gridengine/parse.js';
import { status } from '../../helpers/contract.js';
import { droverJson, runDrover } from '../../helpers/drover.js';
import { tempWorkspace, waitFor } from '../../helpers/workspace.js';

/**
 * The real Grid Engine for the integration tests (scripts/test-cluster/gridengine-up.sh). Without one the tests
 * are skipped with a notice; with DROVER_TEST_GRIDENGINE=1 (CI) a missing cluster fails them.
 */

function probe(): string | undefined {
  const r = spawnSync('qstat', ['-xml'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return `qstat cannot be run (${r.error.message})`;
  if (r.status !== 0) return `qstat failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`;
  return undefined;
}

const missing = probe();
const required = process.env.DROVER_TEST_GRIDENGINE === '1';
if (missing && !required) {
  process.stderr.write(
    `NOTICE: Grid Engine tests skipped: ${missing}. Start one with: sudo bash scripts/test-cluster/gridengine-up.sh\n`,
  );
}

type Body = (t: TestContext) => Promise<void>;

/** A test on the real Grid Engine: skipped with a notice without one, failed without one in CI. */
export function clusterTest(name: string, body: Body): void {
  if (!missing) test(name, body);
  else if (required)
    test(name, () => {
      throw new Error(
        `DROVER_TEST_GRIDENGINE=1 but ${missing}: bring it up with scripts/test-cluster/gridengine-up.sh`,
      );
    });
  else test(name, { skip: `no Grid Engine: ${missing}` }, () => {});
}

/** Grid Engine job ids of every launch in a working folder (from the ledger's handles). */
export function launchedJobs(dir: string): string[] {
  const db = path.join(dir, '.drover', 'ledger.db');
  if (!fs.existsSync(db)) return [];
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (
      conn.prepare("SELECT handles FROM launches WHERE backend = 'gridengine'").all() as { handles: string }[]
    )
      .flatMap((r) => (JSON.parse(r.handles) as { arrays?: { id: string }[] }).arrays ?? [])
      .map((a) => a.id);
  } finally {
    conn.close();
  }
}

/** A temp folder for a test; afterwards every Grid Engine job its launches submitted is deleted. */
export function clusterWorkspace(t: TestContext): string {
  let dir = '';
  t.after(() => {
    for (const id of launchedJobs(dir)) spawnSync('qdel', [id], { encoding: 'utf8' });
  });
  dir = tempWorkspace(t, 'drover-ge-test-');
  return dir;
}

/** Whether Grid Engine still lists a job. */
export function inQueue(job: string): boolean {
  return spawnSync('qstat', ['-j', job], { encoding: 'utf8' }).status === 0;
}

/** The indices of a job's array elements Grid Engine still lists, with their states (`qw`, `r`, `Eqw`). */
export function elementsInQueue(job: string): Map<number, string> {
  const r = spawnSync('qstat', ['-xml'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const parsed = parseQstatXml(r.stdout, new Set([job]));
  assert.ok(parsed.ok, `qstat -xml: ${parsed.ok || parsed.why}`);
  return parsed.value.get(job) ?? new Map();
}

/** What `drover launch --backend gridengine --json` prints. */
export interface Launched {
  launch: string;
  tasks: number;
  handles: { arrays: { id: string; offset: number; range: string }[]; tasksPerNode: number; keys: string };
  warnings: string[];
}

/** What `drover launch --dry-run --json` prints. */
export interface DryRun {
  tasks: number;
  tasklist: string;
  submissions: string[][];
  warnings: string[];
}

/** Make job `job` in `cwd` with a real prelaunch. */
export async function prelaunch(cwd: string, job: string, ...args: string[]): Promise<void> {
  const r = await runDrover(['prelaunch', '+jobname', job, ...args, '+q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
}

/** `launch --backend gridengine --jobname JOB ARGS FLAGS [-- QSUB ARGS]`: drover's flags before the `--`. */
function launchArgs(job: string, args: readonly string[], flags: readonly string[]): string[] {
  const extra = args.indexOf('--');
  const own = extra < 0 ? args : args.slice(0, extra);
  const after = extra < 0 ? [] : args.slice(extra);
  return ['launch', '--backend', 'gridengine', '--jobname', job, ...own, ...flags, ...after];
}

/** `drover launch --backend gridengine --jobname JOB ARGS --json [-- QSUB ARGS]`. */
export function launch(cwd: string, job: string, ...args: string[]): Promise<Launched> {
  return droverJson<Launched>(launchArgs(job, args, ['--json']), { cwd });
}

/** The same launch as a dry run: the qsub commands it would run. */
export function dryRun(cwd: string, job: string, ...args: string[]): Promise<DryRun> {
  return droverJson<DryRun>(launchArgs(job, args, ['--dry-run', '--json']), { cwd });
}

/** The `-t` range of a qsub argv. */
export function rangeArg(argv: readonly string[]): string | undefined {
  const i = argv.indexOf('-t');
  return i < 0 ? undefined : argv[i + 1];
}

/** Wait until no task of the job is queued or running; returns its status. */
export function settled(cwd: string, job: string, timeoutMs = 120_000) {
  return waitFor(
    `job ${job} settled`,
    async () => {
      const s = await status(job, { cwd });
      return s.counts.queued + s.counts.running === 0 ? s : undefined;
    },
    timeoutMs,
    500,
  );
}
