/**
 * `drover completion bash|zsh|fish`: scripts made from the command line's own definitions, run in the real
 * shells (bash always; zsh and fish where installed, as CI installs them), completing commands, options, option
 * values and this folder's job names.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { allCommands } from '../../src/cli/cli-tree.js';
import { droverTree } from '../../src/cli/completion.js';
import { buildProgram } from '../../src/cli/main.js';
import { droverBin, runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

const has = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

/** A folder with the jobs `lr` (drover's) and `onager-job` (a jobfile made by hand), and `drover` on PATH. */
async function folder(
  t: Parameters<typeof tempWorkspace>[0],
): Promise<{ cwd: string; env: NodeJS.ProcessEnv }> {
  const cwd = tempWorkspace(t);
  const r = await runDrover(
    ['prelaunch', '+command', 'echo', '+jobname', 'lr', '+arg', '--x', '1', '2', '+q'],
    {
      cwd,
    },
  );
  assert.equal(r.code, 0, r.stderr);
  fs.mkdirSync(path.join(cwd, '.drover', 'jobs', 'onager-job'), { recursive: true });
  fs.writeFileSync(path.join(cwd, '.drover', 'jobs', 'onager-job', 'jobs.json'), '{"1": ["echo 1", ""]}');
  const bin = path.join(cwd, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(
    path.join(bin, 'drover'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(droverBin)} "$@"\n`,
    {
      mode: 0o755,
    },
  );
  return { cwd, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } };
}

async function script(shell: string, cwd: string): Promise<string> {
  const r = await runDrover(['completion', shell], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const file = path.join(cwd, `completion.${shell}`);
  fs.writeFileSync(file, r.stdout);
  return file;
}

/** What bash's completion offers for the words typed so far (the last one being completed). */
function bashComplete(file: string, words: string[], cwd: string, env: NodeJS.ProcessEnv): string[] {
  const r = spawnSync(
    'bash',
    [
      '-c',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${...}, not JavaScript's
      'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _drover; printf "%s\\n" "${COMPREPLY[@]}"',
      file,
      ...words,
    ],
    { cwd, env, encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l !== '');
}

test('the bash script is valid bash and completes commands, options, values and job names', async (t) => {
  const { cwd, env } = await folder(t);
  const file = await script('bash', cwd);
  assert.equal(spawnSync('bash', ['-n', file]).status, 0, 'bash -n accepts it');
  const cases: [string[], string[]][] = [
    [['drover', 'sta'], ['status']],
    [['drover', 'launch', '--back'], ['--backend']],
    [
      ['drover', 'launch', '--backend', ''],
      ['local', 'slurm', 'gridengine'],
    ],
    [
      ['drover', 'status', ''],
      ['lr', 'onager-job'],
    ],
    [['drover', 'list', 'l'], ['lr']],
    [
      ['drover', 'launch', '--jobname', ''],
      ['lr', 'onager-job'],
    ],
    [['drover', 'launch', '--max-tasks', '4', '--jobname', 'o'], ['onager-job']],
    [['drover', 'pool', 'c'], ['create']],
    [['drover', 'pool', 'status', '--js'], ['--json']],
    [['drover', 'server', 'token', 'r'], ['revoke']],
    [
      ['drover', 'prelaunch', '+ar'],
      ['+arg', '+arg-mode'],
    ],
    [['drover', 'list', '--state', 'fa'], ['failed']],
  ];
  for (const [words, want] of cases)
    assert.deepEqual(bashComplete(file, words, cwd, env).sort(), [...want].sort(), words.join(' '));
});

test('every command and option of the command line is in the completion scripts: they cannot drift', async (t) => {
  const cwd = tempWorkspace(t);
  const tree = droverTree(buildProgram('0.0.0'));
  const commands = allCommands(tree);
  assert.ok(commands.length > 15, 'the tree holds the nested commands too');
  for (const shell of ['bash', 'zsh', 'fish']) {
    const text = fs.readFileSync(await script(shell, cwd), 'utf8');
    for (const c of commands) {
      assert.ok(text.includes(c.name), `${shell} completes ${c.name}`);
      for (const o of c.options) {
        const word = shell === 'fish' ? `-l ${o.long.replace(/^--/, '')}` : o.long;
        assert.ok(text.includes(word), `${shell} completes ${c.name} ${o.long}`);
      }
    }
  }
});

test('zsh (through bashcompinit) and fish load their scripts and complete in the real shells', async (t) => {
  const { cwd, env } = await folder(t);
  if (has('zsh')) {
    const file = await script('zsh', cwd);
    assert.equal(spawnSync('zsh', ['-n', file]).status, 0, 'zsh -n accepts it');
    const r = spawnSync(
      'zsh',
      [
        '-c',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${...}, not JavaScript's
        'autoload -U compinit && compinit -u -D; source "$1"; print -r -- ${_comps[drover]}',
        'zsh',
        file,
      ],
      {
        cwd,
        env,
        encoding: 'utf8',
      },
    );
    assert.match(r.stdout, /_bash_complete.*-F _drover/, `zsh registers the completion: ${r.stderr}`);
  } else t.diagnostic('zsh is not installed: its script is checked only for drift');
  if (has('fish')) {
    const file = await script('fish', cwd);
    assert.equal(spawnSync('fish', ['-n', file]).status, 0, 'fish -n accepts it');
    const complete = (line: string) => {
      const r = spawnSync(
        'fish',
        ['--no-config', '-c', `source ${JSON.stringify(file)}; complete -C ${JSON.stringify(line)}`],
        {
          cwd,
          env,
          encoding: 'utf8',
        },
      );
      assert.equal(r.status, 0, r.stderr);
      return r.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split('\t')[0]);
    };
    assert.deepEqual(complete('drover sta'), ['status']);
    assert.deepEqual(complete('drover status ').sort(), ['lr', 'onager-job']);
    assert.ok(complete('drover pool status --').includes('--all'), 'nested commands have their own options');
    assert.ok(!complete('drover status --').includes('--all'), 'and the top-level one does not get them');
    assert.deepEqual(complete('drover launch --backend ').sort(), ['gridengine', 'local', 'slurm']);
  } else t.diagnostic('fish is not installed: its script is checked only for drift');
});

test('completion --jobs only reads: nothing in a fresh folder, jobfiles alone when the ledger is damaged', async (t) => {
  const cwd = tempWorkspace(t);
  const fresh = await runDrover(['completion', '--jobs'], { cwd });
  assert.equal(fresh.code, 0);
  assert.equal(fresh.stdout, '');
  assert.deepEqual(snapshot(cwd), [], 'a fresh folder stays empty');

  const { cwd: dir } = await folder(t);
  fs.writeFileSync(path.join(dir, '.drover', 'ledger.db'), 'not a database');
  const before = snapshot(dir);
  const damaged = await runDrover(['completion', '--jobs'], { cwd: dir });
  assert.equal(damaged.code, 0, damaged.stderr);
  assert.deepEqual(damaged.stdout.split('\n').filter(Boolean).sort(), ['lr', 'onager-job']);
  assert.deepEqual(snapshot(dir), before, 'nothing was written');
});

test('completion refuses an unknown shell, no shell, and a shell with --jobs: exit 2, one line', async (t) => {
  const cwd = tempWorkspace(t);
  for (const [args, what] of [
    [['completion', 'tcsh'], /'tcsh' is not a shell drover completes: use bash, zsh, fish/],
    [['completion', ''], /'' is not a shell/],
    [['completion', 'bash\nrm -rf /'], /not a shell/],
    [['completion'], /needs a shell: bash, zsh, fish/],
    [['completion', 'bash', '--jobs'], /a shell or --jobs, not both/],
  ] as const) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, what);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, `one line: ${JSON.stringify(r.stderr)}`);
    assert.equal(r.stdout, '');
  }
  assert.deepEqual(snapshot(cwd), []);
});
