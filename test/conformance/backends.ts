import { spawnSync } from 'node:child_process';
import { testEnv } from '../helpers/drover-in-process-fake.js';
import { fakeScheduler } from '../helpers/fake-scheduler.js';
import { createPoolIn, startPoolServer } from '../helpers/pool-server.js';
import {
  clusterSkip,
  gridEngineUp,
  realScheduler,
  type SchedulerSite,
  slurmUp,
} from '../helpers/real-scheduler.js';
import {
  type BackendUnderTest,
  cleanupStack,
  type SchedulerFacts,
  type Site,
  workFolder,
} from './backend.js';

/**
 * The backends the conformance scenarios run on: local, a pool of local workers, the real Slurm and Grid Engine
 * test clusters (skipped with a notice when they are not up, failed when CI asks for them), and the FAKE Slurm and
 * Grid Engine of test/fakes/, which run anywhere in seconds.
 */

function run(site: Site, cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...testEnv(), ...site.env }, timeout: 30_000 });
  return r.status === 0 ? r.stdout : '';
}

const SLURM: Omit<SchedulerFacts, 'fake'> = {
  kind: 'slurm',
  submit: 'sbatch',
  cancel: 'scancel',
  queue: 'squeue',
  badRequest: { args: ['--partition', 'nosuch'], says: /Invalid partition name specified.*--partition/ },
  extraArgs: ['--comment=drover conformance'],
  jobIdVar: 'SLURM_ARRAY_JOB_ID',
  elements: (site, id) =>
    run(site, 'squeue', ['-h', '-r', '-j', id, '-o', '%i %j'])
      .split('\n')
      .filter((l) => l.trim() !== '')
      .sort(),
};

/** `ID.INDEX NAME` for each task of a job in `qstat -xml` (ranges of pending tasks expanded). */
function qstatElements(site: Site, id: string): string[] {
  const out: string[] = [];
  for (const m of run(site, 'qstat', ['-xml']).matchAll(/<job_list[^>]*>([\s\S]*?)<\/job_list>/g)) {
    const body = m[1]!;
    if (/<JB_job_number>\s*(\d+)/.exec(body)?.[1] !== id) continue;
    const name = /<JB_name>([^<]*)</.exec(body)?.[1] ?? '';
    for (const part of (/<tasks>([^<]*)</.exec(body)?.[1] ?? '').split(',')) {
      const r = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/.exec(part.trim());
      if (!r) continue;
      for (let i = Number(r[1]); i <= Number(r[2] ?? r[1]); i += Number(r[3] ?? 1))
        out.push(`${id}.${i} ${name}`);
    }
  }
  return out.sort();
}

const GRIDENGINE: Omit<SchedulerFacts, 'fake'> = {
  kind: 'gridengine',
  submit: 'qsub',
  cancel: 'qdel',
  queue: 'qstat',
  badRequest: {
    args: ['--', '-l', 'no_such_resource=1'],
    says: /Grid Engine refused the submission: .*no_such_resource/,
  },
  extraArgs: ['-A', 'conformance'],
  jobIdVar: 'JOB_ID',
  elements: qstatElements,
};

/** A cluster site: a work folder, then the scheduler (its cleanup runs before the folder is removed). */
function clusterSite(
  t: Parameters<BackendUnderTest['open']>[0],
  backend: string,
  scheduler: (defer: (fn: () => Promise<void>) => void) => SchedulerSite,
): Site {
  const defer = cleanupStack(t);
  const cwd = workFolder(defer, `drover-conformance-${backend}-`);
  const s = scheduler((fn) => defer(fn));
  return { cwd, env: s.env, launch: ['--backend', backend], background: [], calls: s.calls, defer };
}

const maxTasks = (n: number) => ['--max-tasks', String(n)];

export const local: BackendUnderTest = {
  name: 'local',
  recordedAs: 'local',
  skip: false,
  pool: false,
  throttle: maxTasks,
  limit: { args: ['--duration', '2s'], waitMs: 20_000 },
  settleMs: 30_000,
  pollMs: 300,
  concurrency: 3,
  async open(t) {
    const defer = cleanupStack(t);
    return {
      cwd: workFolder(defer, 'drover-conformance-local-'),
      env: {},
      launch: ['--backend', 'local'],
      background: ['--detach'],
      calls: () => [],
      defer,
    };
  },
};

export const poolLocal: BackendUnderTest = {
  name: 'pool-local',
  recordedAs: 'pool:p',
  skip: false,
  pool: true,
  throttle: () => [],
  settleMs: 30_000,
  pollMs: 300,
  concurrency: 2,
  async open(t) {
    const defer = cleanupStack(t);
    const site: Site = {
      cwd: workFolder(defer, 'drover-conformance-pool-'),
      env: {},
      launch: ['--pool', 'p'],
      background: [],
      calls: () => [],
      defer,
    };
    await startPoolServer(site);
    await createPoolIn(site, 'p', ['--workers', '2', '--cpus', '1']);
    return site;
  },
};

export const slurm: BackendUnderTest = {
  name: 'slurm',
  recordedAs: 'slurm',
  // Asked when this backend's file runs, not when any conformance file loads this module (see CLUSTERS).
  get skip() {
    return clusterSkip('slurm');
  },
  down: () => (slurmUp() ? undefined : 'Slurm does not answer: run scripts/test-cluster/slurm-up.sh'),
  scheduler: { ...SLURM, fake: false },
  pool: false,
  throttle: maxTasks,
  // Slurm counts time limits in minutes and checks them every ~30 s: a stop takes 60-90 s.
  limit: { args: ['--duration', '1m'], waitMs: 180_000 },
  settleMs: 120_000,
  pollMs: 1000,
  concurrency: 12,
  open: async (t) => clusterSite(t, 'slurm', (after) => realScheduler({ after }, 'slurm')),
};

export const gridengine: BackendUnderTest = {
  name: 'gridengine',
  recordedAs: 'gridengine',
  // Asked when this backend's file runs, not when any conformance file loads this module (see CLUSTERS).
  get skip() {
    return clusterSkip('gridengine');
  },
  down: () =>
    gridEngineUp() ? undefined : 'Grid Engine does not answer: run scripts/test-cluster/gridengine-up.sh',
  scheduler: { ...GRIDENGINE, fake: false },
  pool: false,
  throttle: maxTasks,
  limit: { args: ['--duration', '6s'], waitMs: 90_000 },
  settleMs: 120_000,
  pollMs: 1000,
  concurrency: 12,
  open: async (t) => clusterSite(t, 'gridengine', (after) => realScheduler({ after }, 'gridengine')),
};

export const slurmFake: BackendUnderTest = {
  name: 'slurm-fake',
  recordedAs: 'slurm',
  skip: false,
  scheduler: { ...SLURM, fake: true },
  pool: false,
  throttle: maxTasks,
  // A minute of the fake's --time lasts 2 s (test/helpers/fake-scheduler.ts).
  limit: { args: ['--duration', '1m'], waitMs: 30_000 },
  settleMs: 30_000,
  pollMs: 300,
  concurrency: 3,
  open: async (t) => clusterSite(t, 'slurm', (after) => fakeScheduler({ after }, 'slurm')),
};

export const gridengineFake: BackendUnderTest = {
  name: 'gridengine-fake',
  recordedAs: 'gridengine',
  skip: false,
  scheduler: { ...GRIDENGINE, fake: true },
  pool: false,
  throttle: maxTasks,
  limit: { args: ['--duration', '3s'], waitMs: 30_000 },
  settleMs: 30_000,
  pollMs: 300,
  concurrency: 3,
  open: async (t) => clusterSite(t, 'gridengine', (after) => fakeScheduler({ after }, 'gridengine')),
};
