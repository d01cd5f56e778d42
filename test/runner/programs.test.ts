import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { END_STATE_TABLE, SIGNAL_NAMES } from '../../src/runner/end-state.js';
import { PROGRAMS, programText } from '../../src/runner/programs.js';
import { SCHEDULER_STOP, timeLimitReason, UNKNOWN_STATUS } from '../../src/runner/reasons.js';
import { repoRoot } from '../helpers/drover.js';

/**
 * drover's programs in other languages are real files (src/runner/programs/), each checked by its language's own
 * tools; the bundle carries every one of them; and the exit-status table of docs/runners.md is the code's.
 */

const SOURCE = path.join(repoRoot, 'src', 'runner', 'programs');
const names = Object.keys(PROGRAMS) as (keyof typeof PROGRAMS)[];

/** Run a checker; its output on failure. */
function check(argv: string[], env: NodeJS.ProcessEnv = process.env): { ok: boolean; output: string } {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', env });
  return { ok: r.status === 0, output: `${argv.join(' ')}: ${r.error ?? ''}${r.stdout}${r.stderr}` };
}

const has = (tool: string) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0;

test('the programs folder holds exactly the programs drover knows', () => {
  assert.deepEqual(fs.readdirSync(SOURCE).sort(), [...names].sort());
});

test('the compiled modules read the same text as the source files', () => {
  for (const name of names)
    assert.equal(programText(name), fs.readFileSync(path.join(SOURCE, name), 'utf8'), name);
});

test('Python programs compile (python3 -m py_compile)', {
  skip: has('python3') ? false : 'no python3',
}, (t) => {
  // The byte code goes to a temporary folder, not beside the sources.
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-pycache-'));
  t.after(() => fs.rmSync(cache, { recursive: true, force: true }));
  for (const name of names.filter((n) => n.endsWith('.py'))) {
    const r = check(['python3', '-m', 'py_compile', path.join(SOURCE, name)], {
      ...process.env,
      PYTHONPYCACHEPREFIX: cache,
    });
    assert.ok(r.ok, r.output);
  }
});

test('Perl programs compile (perl -c)', { skip: has('perl') ? false : 'no perl' }, () => {
  for (const name of names.filter((n) => n.endsWith('.pl'))) {
    const r = check(['perl', '-c', path.join(SOURCE, name)]);
    assert.ok(r.ok, r.output);
  }
});

test('shell programs parse (bash -n) and pass shellcheck', (t) => {
  const shell = names.filter((n) => n.endsWith('.sh'));
  for (const name of shell) {
    const r = check(['bash', '-n', path.join(SOURCE, name)]);
    assert.ok(r.ok, r.output);
  }
  if (!has('shellcheck')) {
    t.diagnostic(
      'shellcheck is not installed (apt-get install shellcheck): only bash -n checked the scripts',
    );
    return;
  }
  for (const name of shell) {
    const r = check(['shellcheck', '--shell=bash', path.join(SOURCE, name)]);
    assert.ok(r.ok, r.output);
  }
});

test('Node programs parse (node --check)', () => {
  for (const name of names.filter((n) => n.endsWith('.cjs'))) {
    const r = check([process.execPath, '--check', path.join(SOURCE, name)]);
    assert.ok(r.ok, r.output);
  }
});

test('the bundle carries every program as text', () => {
  const bundle = fs.readFileSync(path.join(repoRoot, 'dist', 'drover.cjs'), 'utf8');
  for (const name of names) {
    // Its longest line that a string literal holds as it is (no quotes, backslashes or `${`).
    const line = fs
      .readFileSync(path.join(SOURCE, name), 'utf8')
      .split('\n')
      .filter((l) => !/["'`\\$]/.test(l))
      .sort((a, b) => b.length - a.length)[0]!;
    assert.ok(line.length > 40 && bundle.includes(line), `${name} is in dist/drover.cjs (${line})`);
  }
});

test('no program keeps its own copy of the reasons or signal names: they come with its settings', () => {
  const words = [SCHEDULER_STOP, UNKNOWN_STATUS, timeLimitReason(1).replace('1 s', ''), 'VTALRM', 'STKFLT'];
  for (const name of names) {
    const text = fs.readFileSync(path.join(SOURCE, name), 'utf8');
    for (const w of words) assert.ok(!text.includes(w), `${name} holds '${w}'`);
  }
});

test('the signal names of the table are Linux’s, by number', () => {
  SIGNAL_NAMES.forEach((name, i) => {
    assert.equal(os.constants.signals[`SIG${name}` as NodeJS.Signals], i + 1, name);
  });
});

/** The table of end-state.ts as docs/runners.md shows it. */
function tableMarkdown(): string {
  const rows = [
    ['#', 'what happened to the attempt', 'state', '`exit_code`, `signal`', 'reason'],
    ...END_STATE_TABLE.map((r, i) => [
      String(i + 1),
      r.when,
      `\`${r.state}\``,
      r.fields,
      r.reason ? `\`${r.reason('T')}\`` : '',
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(3, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]) => `| ${cells.map((s, c) => s.padEnd(widths[c]!)).join(' | ')} |`;
  return [
    line(rows[0]!),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

test('docs/runners.md shows the exit-status table of the code, row for row', () => {
  const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'runners.md'), 'utf8');
  assert.ok(doc.includes(tableMarkdown()), `docs/runners.md should hold this table:\n${tableMarkdown()}`);
});
