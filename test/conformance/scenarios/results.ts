import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import { PYTHON3 } from '../../helpers/python.js';
import { drover, droverJson, launch, script, settled } from '../drive.js';
import { type Scenario, usual } from '../scenario.js';

/**
 * Issue 12's "done when": the README's 3×4 sweep, whose train.py writes {"loss": ...} to $DROVER_RESULT_FILE,
 * gives `drover results lr --best loss --json` naming the right task with its params — on every backend (the
 * runner, the cluster element programs, a pool worker: each names the file beside the attempt's logs).
 */

/** A loss that depends on lr and seed with one least value: lr 0.01 and seed 3 (task 2 + 3 × 2 = 8). */
const TRAIN = `import argparse, json, math, os
p = argparse.ArgumentParser()
p.add_argument('--lr', type=float)
p.add_argument('--seed', type=int)
a = p.parse_args()
loss = abs(math.log10(a.lr) + 2) + abs(a.seed - 3) * 0.125 + 0.5
with open(os.environ['DROVER_RESULT_FILE'], 'w') as f:
    json.dump({'loss': loss, 'metrics': {'seed_seen': a.seed}}, f)
`;

/** The loss train.py computes, for checking every row. */
const lossOf = (lr: string, seed: string) =>
  Math.abs(Math.log10(Number(lr)) + 2) + Math.abs(Number(seed) - 3) * 0.125 + 0.5;

interface ResultJson {
  task: number;
  state: string;
  tag: string;
  params: Record<string, string>;
  duration_s: number | null;
  result: { loss: number; metrics: { seed_seen: number } } | null;
}

export const bestOfSweep: Scenario = {
  name: 'the 3×4 sweep’s train.py writes its loss to $DROVER_RESULT_FILE: results --best loss names task 8',
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'train.py', TRAIN);
    const pre = await drover(site, [
      ...['prelaunch', '+command', `${PYTHON3} train.py`, '+jobname', 'lr'],
      ...['+arg', '--lr', '0.1', '0.01', '0.001', '+arg', '--seed', '1', '2', '3', '4', '+q'],
    ]);
    assert.equal(pre.code, 0, pre.stderr);
    const l = await launch(site, 'lr');
    assert.equal(l.tasks, 12);
    const s = await settled(b, site, 'lr');
    assert.deepEqual(s.counts, counts({ succeeded: 12 }));

    const all = await droverJson<ResultJson[]>(site, ['results', 'lr', '--json']);
    assert.equal(all.length, 12);
    for (const r of all) {
      assert.equal(r.state, 'succeeded');
      assert.deepEqual(Object.keys(r.params), ['--lr', '--seed']);
      assert.ok(r.result, `task ${r.task} left a result`);
      assert.equal(r.result.loss, lossOf(r.params['--lr']!, r.params['--seed']!), `task ${r.task}'s loss`);
      assert.equal(r.result.metrics.seed_seen, Number(r.params['--seed']));
      assert.equal(typeof r.duration_s, 'number');
    }
    const best = await droverJson<ResultJson>(site, ['results', 'lr', '--best', 'loss', '--json']);
    assert.equal(best.task, 8);
    assert.deepEqual(best.params, { '--lr': '0.01', '--seed': '3' });
    assert.equal(best.result?.loss, 0.5);
    // The worst by the same field, and the best by a param read as a number.
    const worst = await droverJson<ResultJson>(site, ['results', 'lr', '--best', 'loss:max', '--json']);
    assert.deepEqual(worst.params, { '--lr': '0.1', '--seed': '1' });
    assert.equal(worst.task, 1, 'loss 1.75 is also task 3’s: the tie goes to the lowest id');
  },
};
