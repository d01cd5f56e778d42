import assert from 'node:assert/strict';
import { test } from 'node:test';
import { elementScript } from '../../../src/backends/gridengine/script.js';

const spec = {
  node: '/opt/node',
  bin: '/opt/drover.cjs',
  launchFile: '/w/launch.json',
  config: { header: 'echo header', footer: 'echo footer' },
  settings: {},
};

test('the element script traps stops first and starts the runner in its own session', () => {
  const text = elementScript(spec, '/w/gridengine');
  const lines = text.split('\n');
  assert.equal(lines[2], 'set -u');
  assert.equal(lines[3], 'drover_pid=');
  assert.ok(lines.indexOf('trap drover_stop USR2 TERM INT') < lines.indexOf('echo header'));
  assert.ok(text.includes(`>'/w/gridengine'/"$JOB_ID.$SGE_TASK_ID.stop"`));
  const start = lines.findIndex((l) => l.includes(' runner '));
  assert.equal(
    lines[start],
    `$drover_setsid '/opt/node' '/opt/drover.cjs' runner '/w/launch.json' --group "$drover_group" &`,
  );
  assert.ok(lines.indexOf('echo footer') > start);
  assert.equal(lines.filter((l) => l === '  drover_status=$?').length, 1);
  assert.ok(!lines.includes('drover_status=$?'));
});

test('elements of one task start the single-task runner the same way, after its settings', () => {
  const lines = elementScript(
    { ...spec, single: { script: '/w/single.pl', table: '/w/tasks.tsv', env: { DROVER_S_JOB: 'J' } } },
    '/w/gridengine',
  ).split('\n');
  const start = lines.findIndex((l) => l.includes('single.pl'));
  assert.equal(lines[start], `$drover_setsid perl '/w/single.pl' '/w/tasks.tsv' "$drover_group" &`);
  assert.ok(lines.indexOf("export DROVER_S_JOB='J'") < start);
});
