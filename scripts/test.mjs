#!/usr/bin/env node
// drover's test runner: every compiled test file (dist/test/**/*.test.js) as a Node process of its own (the file's
// node:test runs its tests and prints TAP), several at once, then the files that must run alone, one at a time.
// Usage (after npm run build):
//   node scripts/test.mjs [--jobs N] [--unit] [--timings] [PATTERN...]
//   --jobs N    files run at once in the first part (default: 2 per core, at least 2)
//   --spare N   up to N more at once while the CPU idles (default: as many as --jobs; 0: never more)
//   --unit      only the unit tests: pure code, no process of drover started (test:unit)
//   --timings   print every file's time, slowest first
//   --list      print the files that would run, and which run alone and why; run nothing
//   --real-cli  every drover command as a process of its own (CI's way), not the short ones in the test's
//               process (DROVER_TEST_CLI=process|in-process says the same; CI set means process)
//   PATTERN     only files whose path contains it (e.g. runner/ or conformance/local)
// A file runs apart from the rest when it drives the real clusters (they are one shared queue), drives a browser, or
// holds a bound on how fast something answers (a loaded machine would make that bound lie); see ALONE and alone().
// Those of bounds and browsers run in a lane of their own beside the rest, which runs at the lowest CPU priority
// (nice 19) meanwhile: they get the cores whenever they want them, as on an idle machine. The
// others (the clusters', and the one that loads both cores on purpose) run after, one at a time.
// Prints each failing file's output whole, a summary of counts, and exits 1 when any file failed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist', 'test');

/**
 * Test files that drive the real clusters (one queue shared by all), by the start of their path under test/, with
 * the clusters each needs. When none of those is up (and CI did not require it), the file only skips: it runs
 * with the others.
 */
const CLUSTERS = {
  'backends/slurm/cluster.test': ['slurm'],
  'backends/gridengine/gridengine.test': ['gridengine'],
  'backends/gridengine/old-launches.test': ['gridengine'],
  'backends/gridengine/one-qsub.test': ['gridengine'],
  'conformance/slurm.test': ['slurm'],
  'conformance/slurm-alone.test': ['slurm'],
  'conformance/gridengine.test': ['gridengine'],
  'conformance/gridengine-alone.test': ['gridengine'],
  'fakes/fidelity.test': ['slurm', 'gridengine'],
  'python/client.test': ['slurm', 'gridengine'],
};
/** Test files that run alone for another reason, with the reason. */
const ALONE = {
  'web/dashboard.test.ts': 'a real browser, and counts of the requests a page makes in a time window',
  'web/session-scope.test.ts': 'a real browser',
  'controller/adversarial.test.ts': 'slow clients: answers within a second, and each cut at its deadline',
  'controller/adversarial-files.test.ts': 'every answer within a second',
  'runner/conformance-under-load.test.ts': 'it keeps both cores busy on purpose',
};
/**
 * The files of ALONE run in a lane beside the rest, at normal priority while the rest runs at nice 19: each wants
 * the CPU only now and then (slow clients wait out deadlines; a page waits for its server), and gets it at once
 * when it does, as the scheduler runs a nice-0 process before any nice-19 one (a nice-19 process weighs 15
 * against 1024). But these run after the rest, alone: beside it the runner under load's busy loops would take
 * both cores from it, and among it at nice 19 its rounds slow several times over, its loops busy all the while.
 */
const AFTER_THE_REST = new Set(['runner/conformance-under-load.test.ts']);
/** Folders and files of pure code: no drover process, no child process, milliseconds each. */
const UNIT = [
  'tasklist/',
  'util/',
  'launch/',
  'sweep/expand',
  'sweep/grammar',
  'sweep/parse',
  'runner/backoff',
  'runner/slots',
  'runner/command',
  'runner/end-states',
  'controller/dispatch',
  'controller/allocate',
  'controller/report-check',
  'backends/cluster-plan',
  'backends/slurm/parse',
  'backends/slurm/verdict',
  'backends/slurm/cancel-targets',
  'backends/slurm/sbatch-args',
  'backends/gridengine/parse',
  'backends/gridengine/classify',
  'backends/gridengine/plan',
  'backends/gridengine/options',
  'lint/',
];

function usage(code, why) {
  if (why) process.stderr.write(`test: ${why}\n`);
  process.stderr.write(
    'usage: node scripts/test.mjs [--jobs N] [--spare N] [--unit] [--timings] [--list] [--real-cli] [PATTERN...]\n',
  );
  process.exit(code);
}

const args = process.argv.slice(2);
let jobs = Math.max(2, 2 * os.availableParallelism());
/** How many more files may run at once while the CPU idles (see pool); as many as --jobs unless given. */
let spare;
let unit = false;
let timings = false;
let list = false;
/**
 * How the tests run `drover`: each command as a process of its own (`process`: CI, and `--real-cli`), or the
 * short ones inside the test's process (`in-process`, the developer's loop: a fake of the process boundary, see
 * test/helpers/drover-in-process-fake.ts; ~2,000 commands at ~150 ms of CPU each on the 2-core VM).
 */
let cli = process.env.DROVER_TEST_CLI ?? (process.env.CI ? 'process' : 'in-process');
if (cli !== 'process' && cli !== 'in-process')
  usage(2, `DROVER_TEST_CLI='${cli}' is neither process nor in-process: give one, or unset it`);
const patterns = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--jobs') {
    const n = args[++i];
    if (!/^[1-9]\d{0,2}$/.test(n ?? ''))
      usage(2, `--jobs '${n ?? ''}' is not a number from 1 to 999: give e.g. --jobs 4`);
    jobs = Number(n);
  } else if (a === '--spare') {
    const n = args[++i];
    if (!/^\d{1,3}$/.test(n ?? ''))
      usage(2, `--spare '${n ?? ''}' is not a number from 0 to 999: give e.g. --spare 0`);
    spare = Number(n);
  } else if (a === '--unit') unit = true;
  else if (a === '--timings') timings = true;
  else if (a === '--list') list = true;
  else if (a === '--real-cli') cli = 'process';
  else if (a === '-h' || a === '--help') usage(0);
  else if (a.startsWith('-')) usage(2, `unknown option '${a}'`);
  else patterns.push(a);
}
spare ??= jobs;

function walk(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : [p];
  });
}

/** The test's path under test/, as its source names it (runner/x.test.ts). */
const nameOf = (js) => path.relative(dist, js).replace(/\.js$/, '.ts');

/**
 * Whether each real cluster is up (or required: DROVER_TEST_SLURM=1 / DROVER_TEST_GRIDENGINE=1), asked once for
 * the run, at once for both, and handed to the files of CLUSTERS (test/helpers/real-scheduler.ts): `sinfo` takes
 * 9 s to give up on a slurmctld that is not there, and each file that can reach a cluster used to ask again. The
 * other files start meanwhile: only the files of CLUSTERS wait for the answer. Those others are told '-' (not
 * asked), and a file that asks anyway fails saying to add it to CLUSTERS, rather than wait 9 s for sinfo again.
 */
function answers(cmd, argv, ok) {
  return new Promise((resolve) => {
    let out = '';
    let child;
    try {
      child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
    } catch {
      return resolve(false);
    }
    child.on('error', () => resolve(false));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
    });
    child.on('close', (code) => resolve(code === 0 && ok.test(out)));
  });
}
/** A file that can reach a real cluster (CLUSTERS), by its name: the clusters it needs, or undefined. */
const clustersOf = (name) => Object.entries(CLUSTERS).find(([c]) => name.startsWith(c))?.[1];
const given = (name) =>
  process.env[name] === '1' || process.env[name] === '0' ? process.env[name] === '1' : undefined;
/** What sinfo and qstat said, once they have. */
const clusterUp = { slurm: false, gridengine: false };
/** The variable with which CI requires each cluster (its files then run, and fail when it is not up). */
const REQUIRED = { slurm: 'DROVER_TEST_SLURM', gridengine: 'DROVER_TEST_GRIDENGINE' };
// Unit tests reach no cluster: --unit does not ask.
const clustersAsked = (
  unit
    ? Promise.resolve([false, false])
    : Promise.all([
        given('DROVER_TEST_SLURM_UP') ??
          answers('sinfo', ['-h', '-o', '%T'], /\b(idle|mixed|allocated|completing)\b/),
        given('DROVER_TEST_GRIDENGINE_UP') ?? answers('qstat', ['-f'], /@/),
      ])
).then(([slurm, gridengine]) => {
  clusterUp.slurm = slurm;
  clusterUp.gridengine = gridengine;
});

/** Why a file runs alone, or undefined. */
function alone(name) {
  if (ALONE[name]) return ALONE[name];
  const needs = clustersOf(name);
  // A cluster is in play when it is up or required, known once sinfo and qstat have answered.
  if (needs?.some((k) => clusterUp[k] || process.env[REQUIRED[k]] === '1')) return 'the real clusters';
  if (needs) return undefined; // it only skips
  if (/^conformance\/.*-alone\.test\.ts$/.test(name)) return BESIDE_EACH_OTHER;
  return undefined;
}

/**
 * The conformance files of the scenarios that bound how fast answers come (slow clients against a pool, on the
 * fake clusters and on local workers) run beside each other, apart from the rest: each keeps half a core busy,
 * and the three at once held their bounds with half of each to spare (the slowest user request 464 ms of 1000,
 * the longest slow login 5.4 s of 7.5), where four files of any kind could starve them. 42 s against 108 s one
 * after another.
 */
const BESIDE_EACH_OTHER = 'conformance scenarios that bound how fast answers come, beside each other';

let files = walk(dist).filter((f) => f.endsWith('.test.js'));
if (files.length === 0) usage(2, 'no compiled tests under dist/test: run npm run build first');
if (unit) files = files.filter((f) => UNIT.some((u) => nameOf(f).startsWith(u)));
if (patterns.length > 0) files = files.filter((f) => patterns.some((p) => nameOf(f).includes(p)));
if (files.length === 0) usage(2, `no test file matches ${patterns.map((p) => `'${p}'`).join(', ')}`);

/**
 * CPU seconds of this process's reaped children and their reaped descendants (Linux's cutime + cstime), or
 * undefined where /proc is not. A file's CPU is the growth of this across its reaping (a process a test left to
 * init, like a detached runner, is not counted).
 */
const TICKS = 100;
function childCpu() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) / TICKS;
  } catch {
    return undefined;
  }
}

/**
 * Test files whose processes reach the npm registry (npm pack, npx): they keep NODE_EXTRA_CA_CERTS, which a
 * machine behind a TLS proxy sets for npm. Every other file runs without it: Node reads and parses that file at
 * each start, before any code runs (40 ms of a 90 ms `node -e 0` on the development VM with the system's CA
 * bundle), and a test file starts drover and the fake schedulers thousands of times, none of them speaking TLS.
 */
const TLS = ['package/'];
const { NODE_EXTRA_CA_CERTS: _, ...noExtraCerts } = process.env;
/** A file's environment: the CA file as above, and what the clusters said (only to the files of CLUSTERS). */
function envOf(js) {
  const name = nameOf(js);
  const said = (up) => (clustersOf(name) ? (up ? '1' : '0') : '-');
  return {
    ...(TLS.some((p) => name.startsWith(p)) ? process.env : noExtraCerts),
    DROVER_TEST_SLURM_UP: said(clusterUp.slurm),
    DROVER_TEST_GRIDENGINE_UP: said(clusterUp.gridengine),
    DROVER_TEST_CLI: cli,
  };
}

/**
 * Run one file (at the lowest CPU priority when `low`: through nice(1), so that its first process and everything
 * it starts have it from their first instruction); resolves with its counts, time and output.
 */
function runFile(js, low = false) {
  const t0 = Date.now();
  return new Promise((resolve) => {
    // The file itself, not `node --test FILE`: that starts a second Node for the file, ~150 ms of CPU each.
    const argv = [process.execPath, '--test-reporter=tap', js];
    if (low) argv.unshift('nice', '-n', '19');
    const child = spawn(argv[0], argv.slice(1), {
      cwd: root,
      env: envOf(js),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d) => {
      out += d;
    });
    let cpu;
    child.on('exit', () => {
      const now = childCpu();
      cpu = now === undefined || cpuSeen === undefined ? undefined : now - cpuSeen;
      cpuSeen = now;
    });
    child.on('close', (code, signal) => {
      const count = (k) => Number(new RegExp(`^# ${k} (\\d+)$`, 'm').exec(out)?.[1] ?? 0);
      resolve({
        name: nameOf(js),
        ok: code === 0,
        why: code === 0 ? '' : signal ? `killed by ${signal}` : `exit ${code}`,
        seconds: (Date.now() - t0) / 1000,
        cpu,
        tests: count('tests'),
        pass: count('pass'),
        fail: count('fail'),
        skipped: count('skipped'),
        todo: count('todo'),
        cancelled: count('cancelled'),
        out,
      });
    });
  });
}

/**
 * The failures in a file's TAP output, a few lines each: what failed, where, and the error's first lines. CI
 * keeps only the head and tail of a long log, so these come again at the end of the run.
 */
function failureDigest(out) {
  const lines = out.split('\n');
  const digest = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)not ok \d+ - (.*)$/.exec(lines[i]);
    if (!m) continue;
    // The YAML block ends at `...` as indented as its `---`: an assertion's diff has `...` lines of its own.
    const end = `${m[1]}  ...`;
    const block = [];
    for (let j = i + 1; j < lines.length && lines[j] !== end; j++) block.push(lines[j]);
    if (block.some((l) => /failureType: 'subtestsFailed'/.test(l))) continue;
    const useful = block.filter(
      (l) =>
        l.trim() !== '' &&
        !l.includes('(node:') &&
        !/^\s*(---|duration_ms:|type:|code:|name:|operator:|failureType:|location:|error: [|>]-?$)/.test(l),
    );
    // An assertion's diff says what differed only in its + and - lines, often far below its head: those
    // first, so that a log cut to a few lines per failure still shows them.
    const changed = useful.filter((l) => /^\s*[+-] /.test(l) && !/^\s*\+ actual - expected/.test(l));
    const kept = [
      ...useful.slice(0, 2),
      ...changed,
      ...useful.slice(2).filter((l) => !changed.includes(l)),
    ].slice(0, 16);
    digest.push(`  not ok - ${m[2]}`, ...kept.map((l) => `    ${l.trim()}`));
  }
  return digest.length > 0 ? digest : ['  (no failing test in its output: see above)'];
}

let cpuSeen = childCpu();
const results = [];
function report(r) {
  results.push(r);
  const mark = r.ok ? 'ok  ' : 'FAIL';
  process.stdout.write(`${mark} ${r.name} (${r.pass}/${r.tests}, ${r.seconds.toFixed(1)} s)\n`);
  if (!r.ok) process.stdout.write(`---- ${r.name}: ${r.why}\n${r.out}\n---- end of ${r.name}\n`);
}

/**
 * The share of the machine's CPU time left idle since the last call (Linux's /proc/stat: idle and iowait of
 * every CPU), or undefined where there is none.
 */
function idleMeter() {
  let prev;
  return () => {
    let f;
    try {
      f = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
    } catch {
      return undefined;
    }
    const last = prev;
    prev = f;
    if (!last) return undefined;
    const total = f.reduce((a, v, i) => a + v - last[i], 0);
    return total > 0 ? (f[3] - last[3] + f[4] - last[4]) / total : undefined;
  };
}

/**
 * Run the files of `queue` with `n` at once, in its order (at the lowest CPU priority when `low`); files that
 * `more` puts into the queue while it runs too (it does not end before `more` has). Up to `spare` more at once
 * while the machine idles: many files spend most of their time waiting (a task's sleep, a deadline, a worker's
 * poll), and four such at once left up to 39% of the CPU idle for half a minute at a time. Each second with at least IDLE_TO_ADD of the
 * CPU idle starts one more file, which runs to its end; none starts while the CPU is busy, so the files of
 * bounds in the lane and the load a test makes on purpose keep the machine as before.
 */
const IDLE_TO_ADD = 0.3;
/** How many files ran as spares (in the summary). */
let extraFiles = 0;
async function pool(queue, n, low = false, more = Promise.resolve(), spare = 0) {
  const worker = async () => {
    for (;;) {
      let f = queue.shift();
      if (f === undefined) {
        await more;
        f = queue.shift();
        if (f === undefined) return;
      }
      report(await runFile(f, low));
    }
  };
  const extra = [];
  let ended = false;
  const workers = Promise.all(Array.from({ length: n }, worker)).then(() => {
    ended = true;
  });
  const idle = idleMeter();
  idle();
  let running = 0;
  while (spare > 0 && !ended) {
    await Promise.race([workers, new Promise((r) => setTimeout(r, 1000))]);
    const share = idle();
    if (ended || running >= spare || queue.length === 0 || share === undefined || share < IDLE_TO_ADD)
      continue;
    const f = queue.shift();
    running++;
    extraFiles++;
    extra.push(
      runFile(f, low).then((r) => {
        report(r);
        running--;
      }),
    );
  }
  await workers;
  await Promise.all(extra);
}

// Longest first, so that the run does not end on one long file with the other slots idle: the conformance
// files, then the files of over a minute (python/client.test.ts came last and ran alone for a minute), by folder.
const SLOW_FIRST = [
  'conformance/',
  'python/',
  'runner/conformance',
  'cli/input-range',
  'cli/job-identity',
  'package/',
  'pool/',
  'cli/',
  'runner/',
  'controller/',
  'backends/',
];
const rank = (f) => {
  const i = SLOW_FIRST.findIndex((p) => nameOf(f).startsWith(p));
  return i < 0 ? SLOW_FIRST.length : i;
};
/**
 * How long each file took in the runs before on this machine (its wall seconds), kept where npm keeps tools'
 * caches. The files with a time there run longest first by it: the folders' order above left files of 13-60 s
 * (a worker's file shipping, a full disk) to the end of the run, with a third of the CPU idle. A file with no
 * time yet (new, or a first run) goes by its folder's rank, before the timed ones.
 */
const durationsFile = path.join(root, 'node_modules', '.cache', 'drover-tests', 'durations.json');
let durations = {};
try {
  const d = JSON.parse(fs.readFileSync(durationsFile, 'utf8'));
  if (d && typeof d === 'object') durations = d;
} catch {
  // no runs yet
}
const timed = (f) => {
  const t = durations[nameOf(f)];
  return typeof t === 'number' && Number.isFinite(t) && t >= 0 ? t : undefined;
};
const byRank = (a, b) => {
  const ta = timed(a);
  const tb = timed(b);
  if (ta === undefined || tb === undefined)
    return (ta === undefined ? 0 : 1) - (tb === undefined ? 0 : 1) || rank(a) - rank(b) || a.localeCompare(b);
  return tb - ta || a.localeCompare(b);
};
files.sort(byRank);
// The files of CLUSTERS wait for the clusters' answer (--list waits for it: it says where each file runs).
const reaching = files.filter((f) => clustersOf(nameOf(f)));
if (list) await clustersAsked;
const known = list ? files : files.filter((f) => !reaching.includes(f));
const together = known.filter((f) => !alone(nameOf(f)));
const apart = known.filter((f) => alone(nameOf(f)));
const beside = apart.filter((f) => alone(nameOf(f)) === BESIDE_EACH_OTHER);
// The lane beside the rest: the conformance files of bounds (at once), then the others one at a time.
const inLane = (f) =>
  beside.includes(f) || (ALONE[nameOf(f)] !== undefined && !AFTER_THE_REST.has(nameOf(f)));
const lane = apart.filter(inLane);
const after = apart.filter((f) => !inLane(f));
if (list) {
  for (const f of together) process.stdout.write(`${nameOf(f)}\n`);
  for (const f of lane)
    process.stdout.write(`${nameOf(f)}  (beside the rest, at priority: ${alone(nameOf(f))})\n`);
  for (const f of after) process.stdout.write(`${nameOf(f)}  (alone, after: ${alone(nameOf(f))})\n`);
  process.exit(0);
}

const t0 = Date.now();
process.stdout.write(
  `test: ${together.length} files, ${jobs} at a time at nice 19 (${spare} more while the CPU idles); beside them ${lane.length} at normal priority; ` +
    `then ${after.length} alone` +
    (reaching.length > 0 ? `; ${reaching.length} that can reach a cluster once sinfo and qstat answer` : '') +
    '\n' +
    (cli === 'in-process'
      ? "test: short drover commands run in each test's process (a fake of the process boundary; --real-cli or CI for processes)\n"
      : 'test: every drover command runs as a process of its own\n'),
);
/**
 * Once the clusters have answered, the files that can reach them join the run: those whose cluster is in play
 * run alone after the rest, the others (they only skip) with the rest, in their place by rank.
 */
const clustersPlaced = clustersAsked.then(() => {
  const apartNow = reaching.filter((f) => alone(nameOf(f)));
  together.push(...reaching.filter((f) => !apartNow.includes(f)));
  together.sort(byRank);
  after.push(...apartNow);
  after.sort(byRank);
  if (reaching.length === 0) return;
  process.stdout.write(
    `test: Slurm ${clusterUp.slurm ? 'up' : 'not up'}, Grid Engine ${clusterUp.gridengine ? 'up' : 'not up'}: ` +
      `${apartNow.length} file(s) alone after the rest, ${reaching.length - apartNow.length} with it\n`,
  );
});
async function priorityLane() {
  if (beside.length > 0) {
    process.stdout.write(`test: lane (${BESIDE_EACH_OTHER}): ${beside.map(nameOf).join(', ')}\n`);
    await pool([...beside], beside.length);
  }
  for (const f of lane.filter((f) => !beside.includes(f))) {
    process.stdout.write(`test: lane (${alone(nameOf(f))}): ${nameOf(f)}\n`);
    await pool([f], 1);
  }
}
await Promise.all([pool(together, jobs, lane.length > 0, clustersPlaced, spare), priorityLane()]);
for (const f of after) {
  process.stdout.write(`test: alone (${alone(nameOf(f))}): ${nameOf(f)}\n`);
  await pool([f], 1);
}
// This run's times for the next one (a file that failed too: it ran that long). Written whole, then renamed, so
// two runs at once leave one's or the other's.
try {
  for (const r of results) durations[r.name] = Math.round(r.seconds * 10) / 10;
  fs.mkdirSync(path.dirname(durationsFile), { recursive: true });
  const tmp = `${durationsFile}.${process.pid}`;
  fs.writeFileSync(tmp, `${JSON.stringify(durations, null, 1)}\n`);
  fs.renameSync(tmp, durationsFile);
} catch {
  // no place for them: the next run orders by folder
}
const sum = (k) => results.reduce((a, r) => a + r[k], 0);
const failed = results.filter((r) => !r.ok);
if (timings) {
  process.stdout.write('\ntimes, slowest first:\n');
  for (const r of [...results].sort((a, b) => b.seconds - a.seconds))
    process.stdout.write(
      `${r.seconds.toFixed(1).padStart(7)} s ${r.cpu === undefined ? '' : `${r.cpu.toFixed(1).padStart(7)} s CPU`}  ${r.name}\n`,
    );
}
const wall = ((Date.now() - t0) / 1000).toFixed(0);
process.stdout.write(
  `\n# files ${results.length}\n# tests ${sum('tests')}\n# pass ${sum('pass')}\n# fail ${sum('fail')}\n` +
    `# skipped ${sum('skipped')}\n# todo ${sum('todo')}\n# cancelled ${sum('cancelled')}\n# wall ${wall} s\n` +
    `# spares ${extraFiles}\n` +
    (results.every((r) => r.cpu !== undefined) ? `# cpu ${sum('cpu').toFixed(0)} s\n` : ''),
);
if (failed.length > 0) {
  process.stdout.write('\nwhat failed:\n');
  for (const r of failed) process.stdout.write(`${r.name} (${r.why}):\n${failureDigest(r.out).join('\n')}\n`);
  process.stdout.write(`test: ${failed.length} file(s) failed: ${failed.map((r) => r.name).join(', ')}\n`);
  process.exit(1);
}
