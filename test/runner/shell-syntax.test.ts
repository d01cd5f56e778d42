import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { list } from '../helpers/contract.js';
import { runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

// Commands with shell syntax, each writing what it prints to a file: drover must give the same as `sh -c`.
const COMMANDS = [
  `X='a  b'; printf '%s|%s\\n' "$X" "$GREETING" | tr a-z A-Z`,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  'echo $((6 * 7)) "$DROVER_TASK_ID" ${UNSET_VAR:-default}',
  'for f in *.txt; do echo "[$f]"; done',
  '{ echo "double \\"quoted\\""; echo \'single $HOME\' >&2; } 2>&1',
  'true && echo and || echo or; false || echo or2',
  'cd sub && pwd | sed "s|.*/||"',
  'printf %s-%s plain words',
];

test('commands with shell syntax (pipes, $VAR, quotes, globs, && ||) behave as in sh', async (t) => {
  const cwd = tempWorkspace(t);
  fs.writeFileSync(path.join(cwd, 'a.txt'), '');
  fs.writeFileSync(path.join(cwd, 'b.txt'), '');
  fs.mkdirSync(path.join(cwd, 'sub'));
  const env = { GREETING: 'hello there' };
  for (const [i, command] of COMMANDS.entries()) {
    const job = `S${i}`;
    const r = await runDrover(['launch', '--command', command, '--jobname', job, '-q'], { cwd, env });
    assert.equal(r.code, 0, `${command}: ${r.stderr}`);
    const log = await runDrover(['logs', job, '1'], { cwd });
    const expected = execFileSync('/bin/sh', ['-c', command], {
      cwd,
      env: { ...process.env, ...env, DROVER_TASK_ID: '1', UNSET_VAR: '' },
      encoding: 'utf8',
    });
    assert.equal(log.stdout, expected, command);
  }
});

test('the exit status of a shell command is its last command’s, as in sh', async (t) => {
  const cwd = tempWorkspace(t);
  const cases: [string, number][] = [
    ['false | true', 0],
    ['true | false', 1],
    ['true && exit 3', 3],
    ['exit 7', 7],
    ['test -n ""', 1],
  ];
  for (const [i, [command, code]] of cases.entries()) {
    await runDrover(['launch', '--command', command, '--jobname', `X${i}`, '-q'], { cwd });
    const [task] = await list(`X${i}`, { cwd });
    assert.equal(task!.exit_code, code, command);
    assert.equal(task!.state, code === 0 ? 'succeeded' : 'failed', command);
  }
});
