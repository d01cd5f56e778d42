/**
 * `launch --env NAME=VALUE` refuses what is not a variable (exit 2, one line naming it, nothing written); that
 * good values reach the tasks on every backend is the conformance scenario `env`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENV_LIMITS, envOption } from '../../src/cli/env-option.js';
import { runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

test('--env refuses a value without =, a bad or reserved name, a name twice, and too much: exit 2, nothing written', async (t) => {
  const cwd = tempWorkspace(t);
  assert.equal((await runDrover(['prelaunch', '+command', 'true', '+jobname', 'e', '+q'], { cwd })).code, 0);
  const before = snapshot(cwd);
  const many = Array.from({ length: ENV_LIMITS.count + 1 }, (_, i) => ['--env', `V${i}=x`]).flat();
  for (const [args, what] of [
    [['--env', 'NOEQUALS'], /--env 'NOEQUALS' has no '='/],
    [['--env', '=x'], /--env name '' is not a variable name/],
    [['--env', '1X=2'], /name '1X' is not a variable name/],
    [['--env', 'A-B=1'], /name 'A-B' is not a variable name/],
    [['--env', 'A\nB=1'], /name 'A\\nB' is not/],
    [['--env', 'DROVER_TASK_ID=7'], /drover sets the DROVER_ variables itself/],
    [['--env', 'A=1', '--env', 'A=2'], /--env A is given twice with different values/],
    [['--env', `BIG=${'x'.repeat(ENV_LIMITS.valueChars + 1)}`], /more than 100000/],
    [many, /more than 1000 variables/],
  ] as const) {
    const r = await runDrover(['launch', 'e', ...args], { cwd });
    assert.equal(r.code, 2, `${args.slice(0, 4).join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, what);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1);
    assert.deepEqual(snapshot(cwd), before);
  }
});

test('envOption keeps every variable, the same one twice with the same value, and values with = and newlines', () => {
  let env = envOption('A=1', undefined);
  env = envOption('B=x=y', env);
  env = envOption('A=1', env);
  env = envOption('C=line\nnext', env);
  env = envOption('D=', env);
  assert.deepEqual(env, { A: '1', B: 'x=y', C: 'line\nnext', D: '' });
});
