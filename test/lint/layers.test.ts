import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The layer rules `npm run lint` checks (.dependency-cruiser.cjs) catch what they are for, on a planted tree. */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const depcruise = path.join(repo, 'node_modules', '.bin', 'depcruise');

function cruise(cwd: string): { code: number; out: string } {
  const r = spawnSync(depcruise, ['src', '--config', path.join(repo, '.dependency-cruiser.cjs')], {
    cwd,
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

test('the layer rules refuse an upward import, an import of the CLI, a cycle, and the runner reading the ledger', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-layers-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.copyFileSync(path.join(repo, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
  const files: Record<string, string> = {
    'src/cli/main.ts': "import { x } from '../ledger/a.js';\nexport const m = x;\n",
    'src/ledger/a.ts':
      "import { b } from './b.js';\nimport { m } from '../cli/main.js';\nexport const x = b + String(m);\n",
    'src/ledger/b.ts': "import { x } from './a.js';\nexport const b = String(x);\n",
    'src/runner/r.ts': "import { x } from '../ledger/a.js';\nexport const r = x;\n",
    'src/util/u.ts': "import { r } from '../runner/r.js';\nexport const u = r;\n",
  };
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), text);
  }
  const r = cruise(dir);
  assert.notEqual(r.code, 0, r.out);
  for (const rule of ['cli-is-the-top', 'no-cycles', 'runner-not-ledger', 'base-is-the-bottom'])
    assert.match(r.out, new RegExp(`error ${rule}`), `${rule} is caught:\n${r.out}`);
});

test('drover’s own source keeps the layer rules', () => {
  const r = cruise(repo);
  assert.equal(r.code, 0, r.out);
});
