/**
 * `--signal SIG@TIME` on a local launch, with each process starter: a task gets SIG in its process group TIME
 * before its `--task-timeout`, may exit on it (succeeded), or ends `timeout` at the limit if it ignores it; tasks
 * with a limit see DROVER_TIME_LEFT_S and DROVER_DEADLINE, tasks without one do not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { droverJson, runDrover } from '../helpers/drover.js';
import { tempWorkspace, writeScript } from '../helpers/workspace.js';

/** Prints its start, its limit's variables and, on USR1, when it came; exits 0 then. Ignores USR1 with `ignore`. */
const TASK = `start=$(date +%s.%N)
echo "start=$start left=\${DROVER_TIME_LEFT_S-none} deadline=\${DROVER_DEADLINE-none}"
if [ "$1" = ignore ]; then trap '' USR1; else trap 'echo "usr1=$(date +%s.%N)"; exit 0' USR1; fi
i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
echo "no signal"
`;

interface Row {
  task: number;
  state: string;
  exit_code: number | null;
}

/** The values `key=...` of a task's stdout. */
function fields(out: string): Record<string, string> {
  return Object.fromEntries([...out.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

for (const spawner of ['python', 'perl', 'node']) {
  test(`--signal USR1@4 with --task-timeout 6 (${spawner} starter): a trapping task exits 0 about 2 s in, one ignoring it times out`, async (t) => {
    const cwd = tempWorkspace(t);
    writeScript(cwd, 'task.sh', TASK);
    const env = { DROVER_SPAWNER: spawner };
    const pre = await runDrover(
      ['prelaunch', '+command', 'bash task.sh', '+jobname', 'W', '+pos-arg', 'trap', 'ignore', '+q'],
      { cwd },
    );
    assert.equal(pre.code, 0, pre.stderr);
    const before = Date.now() / 1000;
    const r = await runDrover(
      ['launch', 'W', '--task-timeout', '6', '--signal', 'USR1@4', '--kill-grace', '1', '-q'],
      { cwd, env },
    );
    assert.equal(r.code, 1, `one task times out: ${r.stderr}`);
    const rows = await droverJson<Row[]>(['list', '--jobname', 'W', '--json'], { cwd });
    assert.deepEqual(
      rows.map((x) => [x.task, x.state, x.exit_code]),
      [
        [1, 'succeeded', 0],
        [2, 'timeout', null],
      ],
    );
    const trapped = fields((await runDrover(['logs', 'W', '1'], { cwd })).stdout);
    const start = Number(trapped.start);
    const delay = Number(trapped.usr1) - start;
    assert.ok(delay > 1.5 && delay < 5, `USR1 about 2 s after the start, not ${delay} s`);
    assert.equal(trapped.left, '6');
    const deadline = Number(trapped.deadline);
    assert.ok(Math.abs(deadline - (start + 6)) <= 1.5, `deadline ${deadline} about 6 s after start ${start}`);
    assert.ok(deadline >= before + 5, `deadline ${deadline} after the launch began (${before}) + 5 s`);
    const ignored = await runDrover(['logs', 'W', '2'], { cwd });
    assert.doesNotMatch(ignored.stdout, /usr1=|no signal/);
    assert.match(ignored.stdout, /left=6 /);
  });
}

test('without a limit a task has no DROVER_TIME_LEFT_S or DROVER_DEADLINE; --duration on local is each task’s limit', async (t) => {
  const cwd = tempWorkspace(t);
  const show = `echo "left=\${DROVER_TIME_LEFT_S-none} deadline=\${DROVER_DEADLINE-none}"`;
  const none = await runDrover(['launch', '--command', show, '--jobname', 'N', '-q'], { cwd });
  assert.equal(none.code, 0, none.stderr);
  assert.equal((await runDrover(['logs', 'N', '1'], { cwd })).stdout, 'left=none deadline=none\n');
  const d = await runDrover(['launch', '--command', show, '--jobname', 'D', '--duration', '2h', '-q'], {
    cwd,
  });
  assert.equal(d.code, 0, d.stderr);
  const f = fields((await runDrover(['logs', 'D', '1'], { cwd })).stdout);
  assert.equal(f.left, '7200');
  assert.ok(Math.abs(Number(f.deadline) - (Date.now() / 1000 + 7200)) < 60, `deadline ${f.deadline}`);
});
