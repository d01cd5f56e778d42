import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { findPython, namedRecentPython } from '../../src/runner/starters/fork-server.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * Which Python the spawn server runs in: a `python3.N` (N >= 8) by its name, without starting it; anything else
 * only after running the version check.
 */

test('an executable python3.N file with N >= 8, or a link to one, is taken by its name alone', (t) => {
  const dir = tempWorkspace(t, 'drover-find-python-');
  const file = (name: string, mode = 0o755) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, '#!/bin/sh\nexit 1\n', { mode });
    return p;
  };
  const link = (name: string, to: string) => {
    const p = path.join(dir, name);
    fs.symlinkSync(to, p);
    return p;
  };
  assert.equal(namedRecentPython(file('python3.11')), true);
  assert.equal(namedRecentPython(file('python3.8')), true);
  assert.equal(namedRecentPython(link('python3', 'python3.11')), true);
  // Too old, no version in the name, not executable, not a file, dangling, relative: the check must run.
  assert.equal(namedRecentPython(file('python3.7')), false);
  assert.equal(namedRecentPython(link('py-old', 'python3.7')), false);
  assert.equal(namedRecentPython(file('python')), false);
  assert.equal(namedRecentPython(file('python3.12', 0o644)), false);
  fs.mkdirSync(path.join(dir, 'python3.10'));
  assert.equal(namedRecentPython(path.join(dir, 'python3.10')), false);
  assert.equal(namedRecentPython(link('gone', 'python3.13')), false);
  assert.equal(namedRecentPython('python3.11'), false);
  assert.equal(namedRecentPython(path.join(dir, 'python3.9x')), false);
});

test('the Python found is one the version check accepts', { skip: !findPython() && 'no Python 3.8+' }, () => {
  const python = findPython()!;
  const r = spawnSync(python, [
    '-I',
    '-S',
    '-c',
    'import os,sys; assert sys.version_info >= (3, 8); os.posix_spawn',
  ]);
  assert.equal(r.status, 0, String(r.stderr));
});
