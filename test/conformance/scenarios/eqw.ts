import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { EQW_REASON_GRACE_S } from '../../../src/backends/gridengine/classify.js';
import { counts } from '../../helpers/contract.js';
import { lines } from '../../helpers/drover.js';
import { submittedId } from '../../helpers/scheduler-calls.js';
import { waitFor } from '../../helpers/workspace.js';
import type { BackendUnderTest, Site } from '../backend.js';
import { attempts, drover, launch, list, prelaunch, type Status, settled, status } from '../drive.js';
import { fakesOnly, type Scenario, usual } from '../scenario.js';

/** Grid Engine's Eqw: an element it cannot start waits forever; drover shows error with the reason. */
export const eqw: Scenario = {
  name: 'an element Grid Engine cannot start (Eqw) shows error with the reason; --failed deletes and reruns it',
  notFor: (b) => (b.scheduler?.kind === 'gridengine' ? undefined : 'Eqw is Grid Engine’s'),
  timeoutMs: (b) => usual(b) * 2,
  async run(b, site) {
    const s = b.scheduler!;
    const out = path.join(site.cwd, 'element-logs');
    await prelaunch(site, 'Q', 'echo', ['a', 'b', 'c']);
    // The elements' output goes to a folder that does not exist: Grid Engine cannot start them.
    await launch(site, 'Q', ['--tasklist', '2-3'], ['-o', `${out}/`]);
    const first = submittedId(site.calls(s.submit)[0]!)!;
    assert.deepEqual((await settled(b, site, 'Q')).counts, counts({ pending: 1, error: 2 }));
    const text = await drover(site, ['status', 'Q']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /Eqw/);
    assert.match(text.stdout, /can't open output file/);
    // One submission of the launch's 2 tasks: its elements are 1 and 2 (launch.json maps them to tasks 2 and 3).
    assert.deepEqual(
      s.elements(site, first),
      [`${first}.1 Q`, `${first}.2 Q`],
      'the Eqw elements wait in the queue',
    );
    fs.mkdirSync(out);
    const rerun = await launch(site, 'Q', ['--failed'], ['-o', `${out}/`]);
    assert.equal(rerun.tasks, 2);
    await waitFor('the Eqw elements deleted', () => s.elements(site, first).length === 0, 30_000, 500);
    assert.deepEqual((await settled(b, site, 'Q')).counts, counts({ pending: 1, succeeded: 2 }));
    assert.deepEqual(
      (await list(site, 'Q')).map((x) => [x.task, x.state, x.attempts]),
      [
        [1, 'pending', 0],
        [2, 'succeeded', 2],
        [3, 'succeeded', 2],
      ],
    );
  },
};

/** `drover status JOB --json` with DROVER_FAKE_FAULTS=`qstat-j:FAULT`, once drover has asked qstat -j under it. */
async function statusAskingReasons(b: BackendUnderTest, site: Site, job: string, fault: string) {
  const asked = () => site.calls('qstat').filter((c) => c.argv[0] === '-j').length;
  const before = asked();
  // Until Grid Engine puts the elements in Eqw, drover has no reason to ask qstat -j.
  const r = await waitFor(
    `drover to ask qstat -j while it is ${fault} (job ${job} on ${b.name})`,
    async () => {
      const r = await drover(site, ['status', job, '--json'], { DROVER_FAKE_FAULTS: `qstat-j:${fault}` });
      return asked() > before ? r : undefined;
    },
    b.settleMs,
    b.pollMs,
  );
  assert.equal(r.code, 0, r.stderr);
  return { counts: (JSON.parse(r.stdout) as Status).counts, warnings: lines(r.stderr) };
}

/**
 * An element in Eqw whose reason drover cannot read — `qstat -j` down, its answer cut short, or whole but without
 * the reason yet — keeps its tasks queued, never `error` with a reason drover did not read; they take the reason
 * once `qstat -j` gives it, and a general one when a whole answer has had none for EQW_REASON_GRACE_S.
 */
export const eqwReasonUnread: Scenario = {
  name: 'an element in Eqw whose reason qstat -j does not give stays queued; then error with the reason, or a general one',
  notFor: (b) => (b.scheduler?.kind === 'gridengine' ? fakesOnly(b) : 'Eqw is Grid Engine’s'),
  // Two launches and a dozen status calls, each of which waits for drover to ask qstat -j.
  timeoutMs: (b) => usual(b) * 2,
  async run(b, site) {
    const out = path.join(site.cwd, 'element-logs');
    await prelaunch(site, 'R', 'echo', ['a', 'b']);
    await launch(site, 'R', [], ['-o', `${out}/`]);
    for (const fault of ['down', 'truncate', 'bare']) {
      const s = await statusAskingReasons(b, site, 'R', fault);
      assert.deepEqual(s.counts, counts({ queued: 2 }), `qstat -j ${fault}`);
      if (fault === 'truncate') {
        assert.equal(s.warnings.length, 1, s.warnings.join('\n'));
        assert.match(s.warnings[0]!, /^drover: warning: qstat -j .* cannot read whole/);
      } else assert.deepEqual(s.warnings, [], `qstat -j ${fault}`);
    }
    assert.deepEqual((await status(site, 'R')).counts, counts({ error: 2 }));
    for (const a of await attempts(site, 'R'))
      assert.match(a.reason ?? '', /\(Eqw\): can't open output file/);

    // Whole answers without the reason: queued through the grace, then the general reason.
    await prelaunch(site, 'G', 'echo', ['a']);
    await launch(site, 'G', [], ['-o', `${out}/`]);
    assert.deepEqual((await statusAskingReasons(b, site, 'G', 'bare')).counts, counts({ queued: 1 }));
    // 20 s short of the grace: the status calls that follow may take seconds on a loaded machine.
    ageEqwSightings(site, EQW_REASON_GRACE_S - 20);
    assert.deepEqual(
      (await statusAskingReasons(b, site, 'G', 'bare')).counts,
      counts({ queued: 1 }),
      'in the grace',
    );
    ageEqwSightings(site, 30);
    assert.deepEqual(
      (await statusAskingReasons(b, site, 'G', 'bare')).counts,
      counts({ error: 1 }),
      'after it',
    );
    const [a] = await attempts(site, 'G');
    assert.equal(a?.reason, 'Grid Engine could not start it (Eqw): Grid Engine gave no reason');
  },
};

/** Move every launch's first sightings of reasonless Eqw elements `seconds` into the past (as time passing would). */
function ageEqwSightings(site: Site, seconds: number): void {
  const db = new Database(path.join(site.cwd, '.drover', 'ledger.db'), { fileMustExist: true });
  let aged = 0;
  try {
    for (const row of db.prepare('SELECT id, sightings FROM launches').all() as {
      id: number;
      sightings: string;
    }[]) {
      const s = JSON.parse(row.sightings) as { eqw?: Record<string, number> };
      if (!s.eqw) continue;
      for (const k of Object.keys(s.eqw)) {
        s.eqw[k]! -= seconds;
        aged++;
      }
      db.prepare('UPDATE launches SET sightings = ? WHERE id = ?').run(JSON.stringify(s), row.id);
    }
  } finally {
    db.close();
  }
  assert.ok(aged > 0, 'no sighting of a reasonless Eqw element to age');
}
