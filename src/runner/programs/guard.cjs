// drover's guard: a small Node program that outlives the runner to stop the tasks Node's spawn started
// (src/runner/starters/node-spawn.ts), as the fork servers stop theirs. Started with `node -e SOURCE GRACE` (the
// runner passes its text from its own bundle) in its own session, so whatever kills the runner's process group
// leaves it alive. It reads lines on stdin: `+PID START` (a task started: its pid, also its process group id, and
// its start time from /proc/PID/stat) and `-PID` (it ended). At end of input it exits; if tasks are left, the
// runner died without stopping them: their groups get SIGTERM, then SIGKILL after GRACE seconds. A group is
// signalled only while its leader is the process that started (same start time) or gone: a pid is not reused
// while a process group of that id has members.
'use strict';
const fs = require('node:fs');
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
const grace = Number(process.argv[1]) >= 0 ? Number(process.argv[1]) : 5;
const tasks = new Map();
function startOf(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return null;
  }
}
function signalAll(sig) {
  for (const [pid, start] of tasks) {
    const now = startOf(pid);
    if (now !== null && now !== start) {
      tasks.delete(pid);
      continue;
    }
    try {
      process.kill(-pid, sig);
    } catch {
      tasks.delete(pid);
    }
  }
}
let rest = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  rest += d;
  let nl = rest.indexOf('\n');
  while (nl >= 0) {
    const line = rest.slice(0, nl);
    rest = rest.slice(nl + 1);
    nl = rest.indexOf('\n');
    if (line[0] === '+') {
      const [pid, start] = line.slice(1).split(' ');
      tasks.set(Number(pid), start);
    } else if (line[0] === '-') tasks.delete(Number(line.slice(1)));
  }
});
process.stdin.on('error', () => {});
process.stdin.on('end', () => {
  if (tasks.size === 0) process.exit(0);
  signalAll('SIGTERM');
  const t0 = Date.now();
  setInterval(() => {
    for (const pid of [...tasks.keys()]) {
      try {
        process.kill(-pid, 0);
      } catch {
        tasks.delete(pid);
      }
    }
    if (tasks.size === 0) process.exit(0);
    if (Date.now() - t0 >= grace * 1000) {
      signalAll('SIGKILL');
      process.exit(0);
    }
  }, 100);
});
