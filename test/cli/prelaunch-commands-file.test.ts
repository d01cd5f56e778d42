/**
 * `prelaunch +commands-file FILE`: a job from a file of commands, one per line (GNU parallel's `:::: file`,
 * HyperQueue's `--each-line`), in onager's jobfile format; what it cannot use is refused before anything is
 * written.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

test('each line is a task: blank lines and # comments skipped, CRLF and blanks trimmed, then it launches', async (t) => {
  const cwd = tempWorkspace(t);
  fs.writeFileSync(
    path.join(cwd, 'cmds.txt'),
    '# the commands\r\necho one\r\n\r\n   echo "two words"  \r\n  # not this\necho three',
  );
  const r = await runDrover(['prelaunch', '+commands-file', 'cmds.txt', '+jobname', 'c'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'echo one\necho "two words"\necho three\nPrelaunched 3 jobs for c.\n');
  assert.equal(
    fs.readFileSync(path.join(cwd, '.drover', 'jobs', 'c', 'jobs.json'), 'utf8'),
    '{"1": ["echo one", ""], "2": ["echo \\"two words\\"", ""], "3": ["echo three", ""]}',
    "onager's jobfile format",
  );
  assert.equal((await runDrover(['launch', 'c', '--quiet'], { cwd })).code, 0);
  const tasks = await droverJson<{ task: number; state: string; params: object }[]>(['list', 'c', '--json'], {
    cwd,
  });
  assert.deepEqual(
    tasks.map((x) => [x.task, x.state, x.params]),
    [1, 2, 3].map((id) => [id, 'succeeded', {}]),
  );
  assert.equal((await runDrover(['logs', 'c', '2'], { cwd })).stdout, 'two words\n');
});

test('+commands-file - reads standard input, and +append adds after the last task', async (t) => {
  const cwd = tempWorkspace(t);
  assert.equal(
    (
      await runDrover(['prelaunch', '+commands-file', '-', '+jobname', 'c', '+q'], {
        cwd,
        input: 'true 1\ntrue 2\n',
      })
    ).code,
    0,
  );
  const r = await runDrover(['prelaunch', '+commands-file', '-', '+jobname', 'c', '+append', '+q'], {
    cwd,
    input: 'true 3\n',
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Prelaunched 3 jobs for c/);
  assert.equal(
    fs.readFileSync(path.join(cwd, '.drover', 'jobs', 'c', 'jobs.json'), 'utf8'),
    '{"1": ["true 1", ""], "2": ["true 2", ""], "3": ["true 3", ""]}',
  );
});

test('a missing, empty, binary or non-UTF-8 file, or one mixed with a sweep, exits 2 with one line and writes nothing', async (t) => {
  const cwd = tempWorkspace(t);
  const files: Record<string, string | Buffer> = {
    'cmds.txt': 'echo 1\n',
    'empty.txt': '\n  \n# only a comment\n',
    'nul.txt': 'echo a\0b\n',
    'latin1.txt': Buffer.from([0x65, 0x63, 0x68, 0x6f, 0x20, 0xe9, 0x0a]),
  };
  for (const [name, body] of Object.entries(files)) fs.writeFileSync(path.join(cwd, name), body);
  fs.mkdirSync(path.join(cwd, 'folder'));
  const before = snapshot(cwd);
  for (const [args, what] of [
    [['+commands-file', 'nope.txt', '+jobname', 'c'], /'nope.txt': no such file/],
    [['+commands-file', 'folder', '+jobname', 'c'], /'folder': is a folder/],
    [['+commands-file', 'empty.txt', '+jobname', 'c'], /holds no commands/],
    [['+commands-file', 'nul.txt', '+jobname', 'c'], /holds a NUL byte/],
    [['+commands-file', 'latin1.txt', '+jobname', 'c'], /is not UTF-8 text/],
    [['+commands-file', '', '+jobname', 'c'], /\+commands-file is empty/],
    [['+commands-file', 'cmds.txt'], /\+jobname is required/],
    [['+commands-file', 'cmds.txt', '+jobname', 'c', '+command', 'x'], /drop \+command/],
    [['+commands-file', 'cmds.txt', '+jobname', 'c', '+arg', '--x', '1', '+tag'], /drop \+arg, \+tag/],
    [['+commands-file', 'cmds.txt', '+jobname', 'bad name'], /jobname/],
    [['+commands-file', 'a\nb', '+jobname', 'c'], /'a\\nb': no such file/],
  ] as const) {
    const r = await runDrover(['prelaunch', ...args], { cwd });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, what);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, JSON.stringify(r.stderr));
    assert.deepEqual(snapshot(cwd), before, `${args.join(' ')} wrote nothing`);
  }
});
