/**
 * The man page (dist/man/drover.1, made by the build from the command line's definitions) and the examples
 * every command's --help prints from the same table.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { allCommands } from '../../src/cli/cli-tree.js';
import { droverTree } from '../../src/cli/completion.js';
import { EXAMPLES } from '../../src/cli/examples.js';
import { buildProgram } from '../../src/cli/main.js';
import { roff } from '../../src/cli/man-page.js';
import { repoRoot, runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

const page = path.join(repoRoot, 'dist', 'man', 'drover.1');
const tree = droverTree(buildProgram('0.0.0'));
const words = (c: (typeof tree.commands)[number]) => [...c.path.slice(1), c.name];

test('the man page is listed in package.json, renders without a warning, and holds every command and option', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { man: string[] };
  assert.deepEqual(pkg.man, ['dist/man/drover.1']);
  const text = fs.readFileSync(page, 'utf8');
  const warnings = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-z', page], { encoding: 'utf8' });
  assert.equal(warnings.status, 0);
  assert.equal(warnings.stderr, '', 'groff -ww has nothing to say about it');
  const shown = spawnSync('groff', ['-man', '-Tutf8', '-P', '-cbou', page], { encoding: 'utf8' }).stdout;
  for (const c of allCommands(tree).slice(1)) {
    assert.ok(shown.includes(`drover ${words(c).join(' ')}`), `the page has drover ${words(c).join(' ')}`);
    for (const o of c.options.filter((o) => o.long !== '--help'))
      assert.ok(text.includes(roff(o.flags)), `the page has ${words(c).join(' ')} ${o.flags}`);
    for (const w of c.plusWords ?? []) assert.ok(shown.includes(w.word), `the page has ${w.word}`);
  }
  assert.match(shown, /EXIT STATUS/);
});

test('roff escapes what roff would read as its own: dots and quotes at a line start, backslashes, non-ASCII', () => {
  assert.equal(roff('.drover/ holds it'), '\\&.drover/ holds it');
  assert.equal(roff("'quoted"), "\\&'quoted");
  assert.equal(roff('a\\b --x'), 'a\\eb \\-\\-x');
  assert.equal(roff('onager’s ×'), 'onager\\[u2019]s \\[u00D7]');
});

test('every command has examples, printed by its --help after the options', async (t) => {
  const cwd = tempWorkspace(t);
  for (const c of allCommands(tree)) {
    const key = c.path.length === 0 ? '' : words(c).join(' ');
    assert.ok((EXAMPLES[key] ?? []).length > 0, `drover ${key} has examples`);
    const r = await runDrover([...(c.path.length === 0 ? [] : words(c)), '--help'], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\nExamples:\n {2}\S/, `drover ${key} --help shows them`);
    for (const e of EXAMPLES[key] ?? []) assert.ok(r.stdout.includes(e), `drover ${key} --help has ${e}`);
  }
  const unknown = Object.keys(EXAMPLES).filter(
    (k) => !allCommands(tree).some((c) => (c.path.length === 0 ? '' : words(c).join(' ')) === k),
  );
  assert.deepEqual(unknown, [], 'no examples for commands that do not exist');
});
