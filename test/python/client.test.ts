import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { childEnv, droverBin, repoRoot } from '../helpers/drover.js';
import { type ServedFake, serveInProcessFake } from '../helpers/drover-in-process-fake.js';
import { PYTHON3 } from '../helpers/python.js';
import { killLeftovers, tempWorkspace } from '../helpers/workspace.js';

/**
 * The Python client (python/) against the real built CLI: each module of python/tests runs under the machine's
 * python3 with `unittest`, in a temporary folder; then the package is installed with pip, offline, and
 * imported from where pip put it. Skipped with a notice when there is no python3.
 */

const PYTHON_DIR = path.join(repoRoot, 'python');
/** Python linters, the first installed one runs: Debian's pyflakes3, pyflakes in python3, or ruff. */
const LINTERS = [['pyflakes3'], ['python3', '-m', 'pyflakes'], ['ruff']];
/**
 * The Python test runs: a module, or with `-k` some of its tests. `needs` names a command of the shared contract
 * that another branch brings (results-params: `results`; list-export: `list --csv`): until the built drover has
 * it, that run is a `todo` saying so, and from then on it must pass.
 */
const RUNS: { name: string; args: string[]; needs?: 'results' | 'csv' }[] = [
  { name: 'tests.test_argv', args: ['tests.test_argv'] },
  { name: 'tests.test_pandas', args: ['tests.test_pandas'] },
  { name: 'tests.test_client', args: ['tests.test_client'] },
  { name: 'tests.test_server', args: ['tests.test_server'] },
  { name: 'tests.test_clusters (launch, wait)', args: ['tests.test_clusters', '-k', 'launch_waits'] },
  {
    name: 'tests.test_clusters (results)',
    args: ['tests.test_clusters', '-k', 'results_best'],
    needs: 'results',
  },
  { name: 'tests.test_results', args: ['tests.test_results'], needs: 'results' },
  { name: 'tests.test_csv', args: ['tests.test_csv'], needs: 'csv' },
];

/** Whether the built drover has a command of the contract yet. */
function has(feature: 'results' | 'csv'): boolean {
  const r = spawnSync(process.execPath, [droverBin, feature === 'results' ? 'results' : 'list', '--help'], {
    encoding: 'utf8',
    env: childEnv(),
  });
  // An unknown command's --help prints drover's own help (exit 0): look for the command's usage line.
  return r.status === 0 && r.stdout.includes(feature === 'results' ? 'Usage: drover results' : '--csv');
}

const WAITING = {
  results: '`drover results` has not landed yet (branch results-params)',
  csv: '`drover list --csv` has not landed yet (branch list-export)',
};

const python = spawnSync(PYTHON3, ['--version'], { encoding: 'utf8' });
const PYTHON_SKIP =
  python.error || python.status !== 0 ? 'python3 is not on PATH: the Python client is not tested' : false;

interface Ran {
  code: number | null;
  output: string;
}

/** In the developer's loop, the client's drover commands run in this process where they can (a FAKE, see there). */
let twin: ServedFake | undefined;

/**
 * Run python3 (by its own path: a version manager's shim on PATH costs ~0.27 s of CPU a start here) with the
 * client's environment: the built drover, the source tree first on sys.path.
 */
function runPython(
  args: string[],
  cwd: string,
  extra: Record<string, string | undefined> = {},
): Promise<Ran> {
  const env = childEnv({
    DROVER_BIN: droverBin,
    ...twin?.env,
    PYTHONPATH: path.join(PYTHON_DIR, 'src'),
    PYTHONDONTWRITEBYTECODE: '1',
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    ...extra,
  });
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON3, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      output += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      output += d;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** Python source files of the client: the package, its tests and the build backend. */
function pythonFiles(): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory() && e.name !== '__pycache__') walk(full);
      else if (e.name.endsWith('.py')) out.push(full);
    }
  };
  walk(PYTHON_DIR);
  return out.sort();
}

describe('the Python client', { skip: PYTHON_SKIP }, () => {
  before(async () => {
    twin = await serveInProcessFake(droverBin);
  });
  after(() => twin?.close());
  for (const run of RUNS) {
    const todo = run.needs !== undefined && !has(run.needs) ? WAITING[run.needs] : false;
    test(`python3 -m unittest ${run.name}`, { timeout: 300_000, todo }, async (t) => {
      const tmp = tempWorkspace(t, 'drover-python-');
      let ran: Ran;
      try {
        ran = await runPython(['-m', 'unittest', '-v', ...run.args], PYTHON_DIR, {
          TMPDIR: tmp,
          DROVER_TEST_KEEP_WORKSPACES: '1',
        });
      } finally {
        for (const d of fs.readdirSync(tmp)) await killLeftovers(path.join(tmp, d));
      }
      assert.equal(ran.code, 0, ran.output);
      const count = /^Ran (\d+) tests? in /m.exec(ran.output);
      assert.ok(count && Number(count[1]) > 0, `no test ran:\n${ran.output}`);
      // Skips (no pandas, no cluster) are shown, one line each, as the TypeScript tests' notices are.
      for (const line of ran.output.split('\n').filter((l) => / \.\.\. skipped /.test(l))) t.diagnostic(line);
    });
  }

  test('every Python file compiles (and pyflakes or ruff finds nothing, when installed)', async (t) => {
    const files = pythonFiles();
    assert.ok(files.length >= 10, files.join('\n'));
    const compiled = await runPython(
      [
        '-c',
        'import sys\nfor f in sys.argv[1:]:\n    compile(open(f, encoding="utf-8").read(), f, "exec")',
        ...files,
      ],
      PYTHON_DIR,
    );
    assert.equal(compiled.code, 0, compiled.output);
    const linter = LINTERS.find(([bin, ...args]) => spawnSync(bin!, [...args, '--version']).status === 0);
    if (!linter) {
      t.diagnostic(
        'no pyflakes or ruff is installed (apt-get install pyflakes3): the Python files were only compiled',
      );
      return;
    }
    const [bin, ...args] = linter;
    const r = spawnSync(bin!, [...args, ...(bin === 'ruff' ? ['check', '--no-cache', PYTHON_DIR] : files)], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, `${linter.join(' ')}:\n${r.stdout}${r.stderr}`);
  });

  test('pip installs ./python offline, with no build requirement, and the installed client imports', {
    timeout: 300_000,
  }, async (t) => {
    const tmp = tempWorkspace(t, 'drover-pip-');
    const target = path.join(tmp, 'site');
    const pip = await runPython(
      ['-m', 'pip', 'install', '--no-index', '--no-deps', '--no-cache-dir', '--target', target, PYTHON_DIR],
      tmp,
      { PIP_DISABLE_PIP_VERSION_CHECK: '1' },
    );
    assert.equal(pip.code, 0, pip.output);
    const installed = fs
      .readdirSync(path.join(target, 'drover'))
      .filter((f) => f !== '__pycache__')
      .sort();
    const source = fs
      .readdirSync(path.join(PYTHON_DIR, 'src', 'drover'))
      .filter((f) => f !== '__pycache__')
      .sort();
    assert.deepEqual(installed, source);
    const imported = await runPython(
      ['-c', 'import drover, json; print(json.dumps([drover.__file__, drover.__version__]))'],
      tmp,
      { PYTHONPATH: target },
    );
    assert.equal(imported.code, 0, imported.output);
    const [file, version] = JSON.parse(imported.output) as [string, string];
    assert.equal(file, path.join(target, 'drover', '__init__.py'));
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    assert.equal(version, pkg.version, 'the Python client is versioned with drover');
    assert.match(
      fs.readFileSync(path.join(PYTHON_DIR, 'pyproject.toml'), 'utf8'),
      new RegExp(`^version = "${pkg.version}"$`, 'm'),
    );
  });
});
