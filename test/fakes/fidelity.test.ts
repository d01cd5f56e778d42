import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { fakeScheduler } from '../helpers/fake-scheduler.js';
import { clusterSkip, realScheduler, type SchedulerKind } from '../helpers/real-scheduler.js';
import { waitFor } from '../helpers/workspace.js';

/**
 * The FAKE schedulers are checked against the real ones: the same commands, run on the real test cluster and on
 * the fake, must answer in the same shapes (ids, states and reasons normalised) — the submissions, the queue
 * listings drover parses, a cancelled element's traces (output line, job completion log, qacct record) and the
 * refusals drover turns into messages. Runs where the real cluster is up.
 */

type Env = Record<string, string>;

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

function sh(env: Env, cmd: string, args: string[]): Ran {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Both sides of one check: the real cluster's environment (its shims) and the fake's. */
function sides(t: TestContext, kind: SchedulerKind): { name: string; env: Env; jobcomp?: string }[] {
  const defer = (fn: () => Promise<void>) => t.after(fn);
  const fake = fakeScheduler({ after: defer }, kind);
  return [
    { name: 'real', env: realScheduler({ after: defer }, kind).env },
    { name: 'fake', env: fake.env, jobcomp: path.join(fake.dir, 'jobcomp.log') },
  ];
}

function tempDir(t: TestContext): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-fidelity-')));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const sorted = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .sort();

describe('the fake Slurm answers like the real one', { skip: clusterSkip('slurm') }, () => {
  test('an array with a throttle: submission, squeue with and without -r, a cancel’s traces', {
    timeout: 120_000,
  }, async (t) => {
    const dir = tempDir(t);
    const script = path.join(dir, 'job.sh');
    fs.writeFileSync(script, '#!/bin/bash\nsleep 30\n', { mode: 0o755 });
    const seen: unknown[] = [];
    for (const side of sides(t, 'slurm')) {
      const out = path.join(dir, `${side.name}-%A_%a.out`);
      const sub = sh(side.env, 'sbatch', [
        '--parsable',
        '--array=1-3%1',
        '--job-name=fid',
        `--output=${out}`,
        script,
      ]);
      assert.match(sub.stdout, /^\d+\n$/, `${side.name} sbatch: ${sub.stderr}`);
      const id = sub.stdout.trim();
      const norm = (text: string) => text.replaceAll(id, 'A');
      await waitFor(`${side.name}: element 1 running`, () =>
        sh(side.env, 'squeue', ['-h', '-r', '-j', id, '-o', '%i %t']).stdout.includes(`${id}_1 R`),
      );
      const each = sorted(norm(sh(side.env, 'squeue', ['-h', '-r', '-j', id, '-o', '%i %t %r %j']).stdout));
      const folded = sorted(norm(sh(side.env, 'squeue', ['-h', '-j', id, '-o', '%i %t %r']).stdout));
      const cancel = sh(side.env, 'scancel', [`${id}_1`]);
      await waitFor(
        `${side.name}: element 1 gone`,
        () => !sh(side.env, 'squeue', ['-h', '-r', '-j', id, '-o', '%i']).stdout.includes(`${id}_1\n`),
        30_000,
      );
      sh(side.env, 'scancel', [id]);
      await waitFor(
        `${side.name}: the array gone`,
        () => sh(side.env, 'squeue', ['-h', '-j', id, '-o', '%i']).stdout.trim() === '',
        30_000,
      );
      const stepd = fs
        .readFileSync(out.replace('%A', id).replace('%a', '1'), 'utf8')
        .replace(/JOB \d+ ON (\S+) CANCELLED AT \S+/, 'JOB N ON $1 CANCELLED AT T');
      const config = sh(side.env, 'scontrol', ['show', 'config']).stdout;
      const jobcomp = side.jobcomp ?? /^JobCompLoc\s*=\s*(\S+)/m.exec(config)?.[1] ?? '';
      const line = fs
        .readFileSync(jobcomp, 'utf8')
        .split('\n')
        .find((l) => l.includes(` ArrayJobId=${id} ArrayTaskId=1 `));
      seen.push({
        each,
        folded,
        cancel: [cancel.status, cancel.stdout, cancel.stderr],
        stepd,
        jobcompKeys: line?.split(' ').map((f) => f.split('=')[0]),
        jobcompState: /JobState=(\S+)/.exec(line ?? '')?.[1],
        maxArraySize: /^MaxArraySize {12}= \d+$/m.test(config),
      });
    }
    assert.deepEqual(seen[1], seen[0]);
  });

  test('refusals and unknown ids', async (t) => {
    const dir = tempDir(t);
    const script = path.join(dir, 'job.sh');
    fs.writeFileSync(script, '#!/bin/bash\ntrue\n', { mode: 0o755 });
    const seen = sides(t, 'slurm').map(({ env }) =>
      [
        sh(env, 'sbatch', ['--parsable', '-p', 'nosuch', '--array=1', script]),
        sh(env, 'sbatch', ['--parsable', '--array=1', '--gres=gpu:1', script]),
        sh(env, 'sbatch', ['--bogus', script]),
        sh(env, 'squeue', ['-h', '-j', '99999999', '-o', '%i']),
        sh(env, 'scancel', ['99999999']),
        sh(env, 'sacct', ['-n']),
      ].map((r) => [r.status, r.stdout, r.stderr]),
    );
    assert.deepEqual(seen[1], seen[0]);
  });
});

/** The <job_list> entries of one job in `qstat -xml`, values that change from run to run replaced. */
function jobEntries(xml: string, id: string): string[] {
  return [...xml.matchAll(/<job_list[^>]*>[\s\S]*?<\/job_list>/g)]
    .map((m) => m[0])
    .filter((e) => e.includes(`<JB_job_number>${id}<`))
    .map((e) =>
      e
        .replaceAll(id, 'A')
        .replace(/<JAT_prio>[^<]*</, '<JAT_prio>P<')
        .replace(/(time>)[^<]*</, '$1T<')
        .replace(/<JB_owner>[^<]*</, '<JB_owner>U<'),
    );
}

describe('the fake Grid Engine answers like the real one', { skip: clusterSkip('gridengine') }, () => {
  test('an array with a throttle: submission, qstat -xml, a deleted task’s accounting', {
    timeout: 120_000,
  }, async (t) => {
    const dir = tempDir(t);
    const script = path.join(dir, 'job.sh');
    fs.writeFileSync(script, 'sleep 30\n');
    const seen: unknown[] = [];
    for (const side of sides(t, 'gridengine')) {
      const out = path.join(dir, `${side.name}/`);
      fs.mkdirSync(out);
      const args = [
        '-terse',
        '-S',
        '/bin/bash',
        '-cwd',
        '-o',
        out,
        '-j',
        'y',
        '-tc',
        '1',
        '-N',
        'fid',
        '-t',
        '1-3',
      ];
      const sub = sh(side.env, 'qsub', [...args, script]);
      assert.match(sub.stdout, /^\d+\.1-3:1\n$/, `${side.name} qsub: ${sub.stderr}`);
      const id = sub.stdout.split('.')[0]!;
      await waitFor(`${side.name}: task 1 running`, () =>
        /<state>r<\/state>/.test(jobEntries(sh(side.env, 'qstat', ['-xml']).stdout, id).join('')),
      );
      const entries = jobEntries(sh(side.env, 'qstat', ['-xml']).stdout, id);
      const del = sh(side.env, 'qdel', [id]);
      await waitFor(
        `${side.name}: the job gone`,
        () => sh(side.env, 'qstat', ['-j', id]).status !== 0,
        60_000,
      );
      const acct = await waitFor(
        `${side.name}: qacct of task 1`,
        () => {
          const r = sh(side.env, 'qacct', ['-j', id, '-t', '1']);
          return r.status === 0 ? r.stdout : undefined;
        },
        30_000,
      );
      const field = (name: string) => new RegExp(`^${name}\\s+(.*)$`, 'm').exec(acct)?.[1]?.trim();
      seen.push({
        entries,
        deleted: del.status,
        acctFields: acct
          .split('\n')
          .map((l) => l.split(/\s/)[0])
          .filter((f) => f && !f.startsWith('=') && !f.startsWith('ru_')),
        failed: field('failed'),
        exitStatus: field('exit_status')?.replace(/\s+/, ' '),
        output: fs.readdirSync(out).map((f) => f.replace(id, 'A')),
      });
    }
    const [real, fake] = seen as { acctFields: string[] }[];
    // The fake prints the qacct fields drover and people read, not all of Grid Engine's usage counters.
    const fields = new Set(fake!.acctFields);
    assert.deepEqual({ ...fake, acctFields: [] }, { ...real, acctFields: [] });
    assert.deepEqual(
      real!.acctFields.filter((f) => fields.has(f)),
      fake!.acctFields,
      'the fake’s qacct fields in the real order',
    );
  });

  test('refusals and unknown ids', async (t) => {
    const dir = tempDir(t);
    const script = path.join(dir, 'job.sh');
    fs.writeFileSync(script, 'true\n');
    const seen = sides(t, 'gridengine').map(({ env }) =>
      [
        sh(env, 'qsub', ['-terse', '-t', '1-2,4', script]),
        sh(env, 'qsub', ['-terse', '-t', '0-3', script]),
        sh(env, 'qsub', ['-terse', '-t', '1-2', '-l', 'no_such_resource=1', script]),
        sh(env, 'qsub', ['-terse', '-t', '1-2', '-l', 'h_rt=abc', script]),
        sh(env, 'qsub', ['-terse', '-t', '1-2', '-N', '1abc', script]),
        sh(env, 'qsub', ['-terse', '-t', '1-2', '-pe', 'nope', '2', script]),
        sh(env, 'qsub', ['-terse', '-t', '1-2', '-q', 'nosuch.q', script]),
        sh(env, 'qsub', ['-terse', '-bogus', script]),
        sh(env, 'qdel', ['99999999']),
        sh(env, 'qstat', ['-j', '99999999']),
        sh(env, 'qacct', ['-j', '99999999']),
      ].map((r) => [r.status, r.stdout, r.stderr]),
    );
    assert.deepEqual(seen[1], seen[0]);
  });
});
