import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { lines, repoRoot, runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

const COMMANDS = ['prelaunch', 'launch', 'status', 'list', 'logs', 'cancel', 'history', 'config'];

test('drover --help, -h, help and --help on each command exit 0 with help on stdout, writing nothing', async (t) => {
  const cwd = tempWorkspace(t);
  for (const args of [
    ['--help'],
    ['-h'],
    ['help'],
    ...COMMANDS.map((c) => [c, '--help']),
    ['help', 'launch'],
  ]) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 0, `drover ${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, /usage/i, `drover ${args.join(' ')} prints a usage`);
    assert.equal(r.stderr, '', `drover ${args.join(' ')} stderr`);
  }
  const top = await runDrover(['--help'], { cwd });
  for (const c of COMMANDS) assert.match(top.stdout, new RegExp(`\\b${c}\\b`), `--help lists ${c}`);
  assert.deepEqual(snapshot(cwd), []);
});

test('drover --version prints the package version', async (t) => {
  const cwd = tempWorkspace(t);
  const { version } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  const r = await runDrover(['--version'], { cwd });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `${version}\n`);
});

test('unknown options, commands and bad option values exit 2 with one line naming them, creating nothing', async (t) => {
  const cwd = tempWorkspace(t);
  const cases: [string[], string][] = [
    [['launch', '--bogus'], '--bogus'],
    [['--bogus'], '--bogus'],
    [['status', '--bogus'], '--bogus'],
    [['list', '--jobname', 'J', '--frobnicate'], '--frobnicate'],
    [['frob'], 'frob'],
    [['launch', '--jobname', 'J', '--max-tasks', '0'], "'0'"],
    [['launch', '--jobname', 'J', '--retries', 'x'], "'x'"],
    [['launch', '--jobname', 'J', '--failed', '--unfinished'], '--unfinished'],
    [['list', '--state', 'done'], "'done'"],
  ];
  for (const [args, named] of cases) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 2, `drover ${args.join(' ')}: ${r.stderr}`);
    assert.equal(lines(r.stderr).length, 1, `drover ${args.join(' ')}: one line, got\n${r.stderr}`);
    assert.ok(r.stderr.includes(named), `drover ${args.join(' ')} names ${named}: ${r.stderr}`);
    assert.equal(r.stdout, '');
  }
  assert.deepEqual(snapshot(cwd), []);
});

test('help and version words inside a sweep or a --command are the user’s: the job is written and run', async (t) => {
  const cwd = tempWorkspace(t);
  // Where drover's own options belong, they are requests: nothing is written.
  for (const args of [
    ['prelaunch', '--help'],
    ['prelaunch', '-h'],
    ['prelaunch', '+command', 'echo', '+jobname', 'j', '--help'],
    ['prelaunch', '-V'],
    ['-V', 'prelaunch'],
  ]) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 0, `drover ${args.join(' ')}: ${r.stderr}`);
    assert.notEqual(r.stdout, '');
  }
  assert.deepEqual(snapshot(cwd), []);
  // Inside the sweep they are values (as onager takes them; test/sweep/onager-differential covers the bytes).
  for (const sweep of [
    ['+flag', '--help'],
    ['+arg', '--version', '1', '2'],
    ['+pos-arg', '-V'],
    ['+tag', '--help'],
    ['+pos-arg', '-h'],
  ]) {
    const r = await runDrover(['prelaunch', '+command', 'echo', '+jobname', 'v', ...sweep], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Prelaunched \d+ jobs for v\./, sweep.join(' '));
  }
  // So is everything after --command: these run as commands (each is 'command not found', exit 127).
  const made = new Set<string>();
  for (const word of ['--version', '-V', '--help', '-h']) {
    const r = await runDrover(['launch', '--command', word, '-q', '--json'], { cwd });
    assert.equal(r.code, 1, `launch --command ${word}: ${r.stderr}`);
    const out = JSON.parse(r.stdout) as { jobname: string; counts: { failed: number } };
    assert.equal(out.counts.failed, 1);
    made.add(out.jobname);
  }
  // Launched within the same second, each --command got its own job.
  assert.equal(made.size, 4);
  const listed = JSON.parse((await runDrover(['list', '--json'], { cwd })).stdout) as {
    jobname: string;
    command: string;
  }[];
  assert.deepEqual(
    listed
      .filter((x) => made.has(x.jobname))
      .map((x) => x.command)
      .sort(),
    ['--help', '--version', '-V', '-h'].sort(),
  );
});

test('a command built alone (as drover builds the one it runs) has the help, options and subcommands it has among all', () => {
  const all = buildProgram('0.0.0');
  const describe = (c: Command): unknown => ({
    help: c.helpInformation(),
    options: c.options.map((o) => o.flags),
    commands: c.commands.map(describe),
  });
  assert.equal(all.commands.length, 16);
  for (const cmd of all.commands) {
    const alone = buildProgram('0.0.0', cmd.name());
    assert.deepEqual(
      alone.commands.map((c) => c.name()),
      [cmd.name()],
    );
    assert.deepEqual(describe(alone.commands[0]!), describe(cmd), cmd.name());
  }
});
