import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import { droverJson, lines, runDrover } from '../helpers/drover.js';
import { runMeasured } from '../helpers/measure.js';
import { ledgerDump, snapshot, tempWorkspace } from '../helpers/workspace.js';

/**
 * Issue 9 §5: input out of range is refused at once (exit 2, one line naming the value and what to do), before
 * anything is expanded, allocated or written (docs/concepts.md invariant 5). Each refusal runs under a hang guard and its
 * peak memory is read: expanding `1-1000000000` took 13 s and 2.4 GB before it was refused.
 */

/** Well above Node's own ~60 MiB, far below what expanding or allocating per id or per slot costs. */
const PEAK_MIB = 200;

/** A folder with job j of 10 tasks (`true`), prelaunched and launched once. */
async function tenTasks(t: TestContext): Promise<string> {
  const cwd = tempWorkspace(t);
  const ids = Array.from({ length: 10 }, (_, i) => String(i + 1));
  const pre = await runDrover(['prelaunch', '+command', 'true', '+jobname', 'j', '+pos-arg', ...ids, '+q'], {
    cwd,
  });
  assert.equal(pre.code, 0, pre.stderr);
  const l = await runDrover(['launch', '--jobname', 'j', '-q'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  return cwd;
}

/** A subtest: drover refuses `args` with exit 2 and one line naming `names`, writes nothing, expands nothing. */
async function refusedAtOnce(t: TestContext, cwd: string, args: string[], names: RegExp): Promise<void> {
  await t.test(args.join(' '), async () => {
    const files = snapshot(cwd);
    const ledger = ledgerDump(cwd);
    const r = await runMeasured(args, { cwd });
    assert.equal(r.hung, false, 'it answered (hang guard)');
    assert.equal(r.code, 2, `exit code; stderr: ${r.stderr}`);
    assert.equal(lines(r.stderr).length, 1, `one line on stderr:\n${r.stderr}`);
    assert.match(r.stderr, names);
    assert.ok(r.peakMib < PEAK_MIB, `peak memory ${r.peakMib.toFixed(0)} MiB: something was expanded`);
    assert.deepEqual(snapshot(cwd), files, 'files unchanged');
    assert.deepEqual(ledgerDump(cwd), ledger, 'ledger unchanged');
  });
}

test('tasklists beyond the job are refused from their ranges, by every command that takes one', async (t) => {
  const cwd = await tenTasks(t);
  const over = /names task 1[0-9]+.*job 'j' has tasks 1-10: pick ids/;
  for (const tl of ['1-1000000000', '1-20000000', '5,1-99999999999999:3', '2,11']) {
    await refusedAtOnce(t, cwd, ['launch', '--jobname', 'j', '--tasklist', tl, '-q'], over);
    await refusedAtOnce(t, cwd, ['launch', '--jobname', 'j', '--tasklist', tl, '--dry-run'], over);
    await refusedAtOnce(t, cwd, ['list', 'j', '--tasklist', tl], over);
    await refusedAtOnce(t, cwd, ['list', '--jobname', 'j', '--tasklist', tl, '--json'], over);
    await refusedAtOnce(t, cwd, ['cancel', 'j', '--tasklist', tl, '--yes'], over);
  }
  for (const task of ['1000000000', '99999999999999999999', '11'])
    await refusedAtOnce(t, cwd, ['logs', 'j', task], new RegExp(`task '?${task}`));
  // Ranges that overlap stay cheap: they are merged before anything is expanded.
  const many = Array.from({ length: 2000 }, () => '1-10').join(',');
  const r = await runMeasured(['list', 'j', '--tasklist', many, '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as unknown[]).length, 10);
});

test('counts out of their documented range are refused, naming the value and the range', async (t) => {
  const cwd = await tenTasks(t);
  const range = (flag: string) =>
    new RegExp(`${flag} '[^']*' is (out of range|not a whole number).*from 1 to 10000000`);
  for (const v of ['99999999999999999999', '5000000000', '100000000', '0', '-1', '1e3', '0x10', '2.5'])
    await refusedAtOnce(t, cwd, ['launch', '--jobname', 'j', '--max-tasks', v, '-q'], range('--max-tasks'));
  for (const flag of ['--tasks-per-node', '--max-tasks-per-node'])
    await refusedAtOnce(
      t,
      cwd,
      ['launch', '--jobname', 'j', '--backend', 'slurm', flag, '5000000000', '--dry-run'],
      range(flag),
    );
  // --num-jobs is refused before the controller is asked (there is none here).
  await refusedAtOnce(
    t,
    cwd,
    ['launch', '--pool', 'p', '--command', 'true', '--num-jobs', '1000000000'],
    range('--num-jobs'),
  );
  await refusedAtOnce(
    t,
    cwd,
    ['config', '--write', 'local', 'max_tasks', '5000000000'],
    /max_tasks '5000000000'/,
  );
  await refusedAtOnce(t, cwd, ['config', '--write', 'local', 'retries', 'lots'], /retries 'lots'/);
});

test('--max-tasks at the top of its range costs the slots the tasks use, not one per slot', async (t) => {
  const cwd = await tenTasks(t);
  const r = await runMeasured(['launch', '--jobname', 'j', '--max-tasks', '10000000', '--json', '-q'], {
    cwd,
  });
  assert.equal(r.hung, false, 'it finished (hang guard)');
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { counts: { succeeded: number } }).counts.succeeded, 10);
  assert.ok(r.peakMib < PEAK_MIB, `peak memory ${r.peakMib.toFixed(0)} MiB`);
});

test('sizes and durations follow one grammar on every backend; bad ones are refused even locally', async (t) => {
  const cwd = await tenTasks(t);
  for (const v of ['5Q', '-5G', '0', '2P', '4 GB', '1e3G', '0x10G', ''])
    await refusedAtOnce(
      t,
      cwd,
      ['launch', '--jobname', 'j', '--mem', v, '-q'],
      /--mem '.*' is (not a memory size|out of range)/,
    );
  for (const v of ['1:99:99', '99:60', '1-24:00:00', '0', '-5', '1e3', '366d', '5x', ''])
    await refusedAtOnce(
      t,
      cwd,
      ['launch', '--jobname', 'j', '--duration', v, '-q'],
      /--duration '.*' is (not a duration|out of range)/,
    );
  await refusedAtOnce(
    t,
    cwd,
    ['launch', '--jobname', 'j', '--task-timeout', '366d', '-q'],
    /--task-timeout '366d'/,
  );
  await refusedAtOnce(
    t,
    cwd,
    ['launch', '--jobname', 'j', '--kill-grace', '99999999999', '-q'],
    /--kill-grace '99999999999' is out of range.*0s to 1h/,
  );
  await refusedAtOnce(
    t,
    cwd,
    ['launch', '--jobname', 'j', '--retry-delay', '-1', '-q'],
    /--retry-delay '-1'/,
  );
  await refusedAtOnce(t, cwd, ['cancel', 'j', '--wait', '2d', '--yes'], /--wait '2d' is out of range/);

  const submissions = async (args: string[]) =>
    (
      await droverJson<{ submissions: string[][] }>(
        ['launch', '--jobname', 'j', '--tasklist', '1-2', '--dry-run', '--json', ...args],
        { cwd },
      )
    ).submissions.flat();
  // One grammar: 4GiB, 4GB, 4g and a bare 4 (gigabytes, as in onager) are the same request everywhere.
  for (const mem of ['4GiB', '4GB', '4g', '4', '4096M']) {
    assert.ok((await submissions(['--backend', 'slurm', '--mem', mem])).includes('--mem=4G'), mem);
  }
  assert.ok((await submissions(['--backend', 'slurm', '--mem', '1.5G'])).includes('--mem=1536M'));
  assert.ok((await submissions(['--backend', 'slurm', '--duration', '1-00:00:00'])).includes('--time=1440'));
  assert.ok((await submissions(['--backend', 'slurm', '--duration', '48:00:00'])).includes('--time=2880'));
  const w = await runDrover(['config', '--write', 'gridengine', 'mem_resource', 'h_vmem'], { cwd });
  assert.equal(w.code, 0, w.stderr);
  for (const mem of ['4GiB', '4', '4GB']) {
    assert.ok((await submissions(['--backend', 'gridengine', '--mem', mem])).includes('h_vmem=4G'), mem);
  }
  assert.ok(
    (await submissions(['--backend', 'gridengine', '--duration', '1-00:00:00'])).includes('h_rt=86400'),
  );
});

test('long limits work as asked: --task-timeout 25d does not time a 0.3 s task out', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(['prelaunch', '+command', 'sleep 0.3', '+jobname', 'long', '+q'], { cwd });
  assert.equal(pre.code, 0, pre.stderr);
  for (const limit of ['25d', '365d', '600:00:00']) {
    const r = await droverJson<{ counts: Record<string, number> }>(
      ['launch', '--jobname', 'long', '--task-timeout', limit, '--kill-grace', '1h', '--json', '-q'],
      { cwd },
    );
    assert.equal(r.counts.succeeded, 1, `--task-timeout ${limit}: ${JSON.stringify(r.counts)}`);
    assert.equal(r.counts.timeout, 0);
  }
});

test('config defaults take their flags’ ranges: used when in range, refused by name when edited out of it', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(['prelaunch', '+command', 'false', '+jobname', 'f', '+q'], { cwd });
  assert.equal(pre.code, 0, pre.stderr);
  const w = await runDrover(['config', '--write', 'local', 'retries', '2'], { cwd });
  assert.equal(w.code, 0, w.stderr);
  const r = await runDrover(['launch', '--jobname', 'f', '--retry-delay', '0', '-q'], { cwd });
  assert.equal(r.code, 1, r.stderr);
  const tasks = await droverJson<{ attempts: number }[]>(['list', 'f', '--json'], { cwd });
  assert.equal(tasks[0]!.attempts, 3, 'config retries 2: three attempts');
  // Written by hand past the range: refused when used, naming the key.
  const file = path.join(cwd, '.drover', 'config.json');
  fs.writeFileSync(file, JSON.stringify({ local: { retries: '2', max_tasks: '1e9' } }));
  await refusedAtOnce(t, cwd, ['launch', '--jobname', 'f', '-q'], /max_tasks in drover config '1e9'/);
});
