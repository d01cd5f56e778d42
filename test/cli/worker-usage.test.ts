import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

/** `drover worker`'s folder options, as a careless or hostile user gives them: one line, exit 2, nothing made. */
test('--local-dir without --no-shared-fs, empty, or a file: one line naming it, exit 2, nothing written', async (t) => {
  const cwd = tempWorkspace(t);
  fs.writeFileSync(path.join(cwd, 'a-file'), 'x');
  const before = snapshot(cwd);
  for (const [args, says] of [
    [['--local-dir', 'here'], /--local-dir goes with --no-shared-fs/],
    [['--no-shared-fs', '--local-dir', ''], /--local-dir '' is empty/],
    [['--no-shared-fs', '--local-dir', '   '], /--local-dir '' is empty|--local-dir ' {3}' is empty/],
    [['--no-shared-fs', '--local-dir', 'a-file'], /--local-dir 'a-file' is not a folder/],
  ] as const) {
    const r = await runDrover(['worker', '--pool', 'p', '--server', 'http://127.0.0.1:9', ...args], { cwd });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, says);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  assert.deepEqual(snapshot(cwd), before);
});
