import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseElementOutput, parseJobcomp, parseSacct } from '../../../src/backends/slurm/accounting.js';
import { parseClusterConfig } from '../../../src/backends/slurm/cluster-config.js';
import { gresGpus, infeasible, parseNodes, parseSlurmTime } from '../../../src/backends/slurm/feasibility.js';
import { parseSqueue } from '../../../src/backends/slurm/squeue.js';
import { wholeValue } from '../answers.js';

// Output as Slurm 22.05 printed it on the test cluster (scripts/test-cluster/slurm-up.sh), trimmed.

test('scontrol show config: MaxArraySize, max_array_tasks, accounting and the job completion log', () => {
  const text = [
    'Configuration data as of 2026-11-30T01:54:32',
    'AccountingStorageType   = accounting_storage/none',
    'JobCompLoc              = /var/log/slurm/jobcomp.log',
    'JobCompType             = jobcomp/filetxt',
    'MaxArraySize            = 100001',
    'SchedulerParameters     = batch_sched_delay=0,sched_min_interval=0',
    '',
    'Slurmctld(primary) at vm is UP',
    '',
  ].join('\n');
  assert.deepEqual(wholeValue(parseClusterConfig(text)), {
    maxArraySize: 100001,
    maxArrayTasks: 100001,
    sacct: false,
    jobcompFile: '/var/log/slurm/jobcomp.log',
  });
  const dbd = parseClusterConfig(
    'Configuration data as of 2026-11-30T01:54:32\nAccountingStorageType = accounting_storage/slurmdbd\nJobCompType = jobcomp/none\nMaxArraySize = 1001\nSchedulerParameters = max_array_tasks=500,bf_continue\nSlurmctld(primary) at vm is UP\n',
  );
  assert.deepEqual(wholeValue(dbd), { maxArraySize: 1001, maxArrayTasks: 500, sacct: true });
  // Cut before its last line, or inside the MaxArraySize line: not whole.
  assert.equal(parseClusterConfig(text.slice(0, text.indexOf('Slurmctld'))).ok, false);
  assert.equal(parseClusterConfig(text.slice(0, text.indexOf('100001') + 3)).ok, false);
});

test('squeue -r lines by element; folded lines are expanded; plain jobs are left out', () => {
  const text = '27_3 PD JobArrayTaskLimit\n27_1 R None\n28_[5-7%2] PD Priority\n29 R None\n';
  const live = wholeValue(parseSqueue(text));
  assert.deepEqual([...live.keys()], ['27_3', '27_1', '28_5', '28_6', '28_7']);
  assert.deepEqual(live.get('27_3'), { state: 'PD', reason: 'JobArrayTaskLimit' });
  assert.deepEqual(wholeValue(parseSqueue('')).size, 0, 'nothing queued');
  // Cut inside a line (exit 0: squeue or its pipe died), or a line that is no element: no answer.
  assert.equal(parseSqueue(text.slice(0, 30)).ok, false);
  assert.equal(parseSqueue('27_1 R None\nslurm_load_jobs error: Socket timed out\n').ok, false);
  assert.equal(parseSqueue('28_[5-%2] PD Priority\n').ok, false);
});

test('jobcomp lines of our arrays by element, with exit codes and signals; other jobs are ignored', () => {
  const line = (id: number, array: number, index: number, state: string, exit: string) =>
    `JobId=${id} UserId=root(0) GroupId=root(0) Name=J JobState=${state} Partition=debug TimeLimit=1 StartTime=x EndTime=y NodeList=vm NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= Tres=cpu=1 Account= QOS= WcKey= Cluster=unknown SubmitTime=x EligibleTime=x ArrayJobId=${array} ArrayTaskId=${index} DerivedExitCode=0:0 ExitCode=${exit} `;
  const text = [
    line(28, 27, 1, 'CANCELLED', '0:0'),
    line(29, 27, 2, 'FAILED', '3:0'),
    line(30, 27, 3, 'TIMEOUT', '0:15'),
    line(40, 39, 1, 'COMPLETED', '0:0'),
    'JobId=26 UserId=root(0) GroupId=root(0) Name=drover-smoke JobState=COMPLETED ExitCode=0:0 ',
  ].join('\n');
  const ends = wholeValue(parseJobcomp(text, new Set(['27'])));
  assert.deepEqual(Object.fromEntries(ends), {
    '27_1': { state: 'CANCELLED', exitCode: 0, source: 'jobcomp' },
    '27_2': { state: 'FAILED', exitCode: 3, source: 'jobcomp' },
    '27_3': { state: 'TIMEOUT', signal: 15, source: 'jobcomp' },
  });
  // The line slurmctld is writing now (no newline yet) waits for the next read; a torn line is not whole.
  const writing = `${text}\n${line(31, 27, 4, 'COMPLETED', '0:0').slice(0, 60)}`;
  assert.equal(wholeValue(parseJobcomp(writing, new Set(['27']))).size, 3);
  const torn = `${line(31, 27, 4, 'COMPLETED', '0:0').slice(0, 250)}${line(32, 27, 5, 'FAILED', '1:0')}\n`;
  assert.equal(parseJobcomp(torn, new Set(['27'])).ok, false);
});

test('sacct -P lines, including folded pending elements cancelled together', () => {
  const text = '12_1|COMPLETED|0:0\n12_2|TIMEOUT|0:0\n12_[4-5]|CANCELLED by 1000|0:0\n13|FAILED|1:0\n';
  const ends = wholeValue(parseSacct(text));
  assert.deepEqual(
    [...ends].map(([k, v]) => [k, v.state]),
    [
      ['12_1', 'COMPLETED'],
      ['12_2', 'TIMEOUT'],
      ['12_4', 'CANCELLED'],
      ['12_5', 'CANCELLED'],
    ],
  );
  // `12_2|TIMEO`: a cut answer would make a timeout look like some other end.
  assert.equal(parseSacct(text.slice(0, 29)).ok, false);
});

test('what slurmstepd writes into an element’s output says timeout, cancel, preemption, node failure', () => {
  const at = 'slurmstepd-vm: error: *** JOB 28 ON vm CANCELLED AT 2026-11-30T01:54:38';
  assert.equal(parseElementOutput(`${at} DUE TO TIME LIMIT ***\n`)?.state, 'TIMEOUT');
  assert.equal(parseElementOutput(`${at} ***\n`)?.state, 'CANCELLED');
  assert.equal(parseElementOutput(`${at} DUE TO PREEMPTION ***\n`)?.state, 'PREEMPTED');
  assert.equal(parseElementOutput(`${at} DUE TO NODE FAILURE ***\n`)?.state, 'NODE_FAIL');
  // scontrol requeue: the element runs again (--open-mode=append keeps each run's lines); the last notice counts.
  assert.equal(parseElementOutput(`${at} DUE TO JOB REQUEUE ***\n`)?.state, 'REQUEUED');
  assert.equal(parseElementOutput(`${at} DUE TO JOB REQUEUE ***\nrun 2\n${at} ***\n`)?.state, 'CANCELLED');
  assert.equal(parseElementOutput('some task output\n'), undefined);
});

test('Slurm times and GRES strings', () => {
  assert.equal(parseSlurmTime('infinite'), undefined);
  assert.equal(parseSlurmTime('30:00'), 1800);
  assert.equal(parseSlurmTime('2:00:00'), 7200);
  assert.equal(parseSlurmTime('1-00:00:00'), 86400);
  assert.equal(parseSlurmTime('60'), 3600);
  assert.equal(gresGpus('(null)'), 0);
  assert.equal(gresGpus('gpu:4'), 4);
  assert.equal(gresGpus('gpu:a100:4(S:0-1),gpu:v100:2'), 6);
});

test('requests no node of the partition can satisfy are warned about; feasible ones are not', () => {
  const text = 'debug*|32|21694|(null)|infinite\nbatch|32|21694|(null)|infinite\nshort|8|1000|gpu:2|30:00\n';
  const nodes = wholeValue(parseNodes(text));
  assert.equal(parseNodes(text.slice(0, -4)).ok, false, 'cut in its last line');
  assert.deepEqual(infeasible({ tasksPerNode: 1, extraArgs: [], cpus: 32, duration: 86400 }, nodes), []);
  const [cpus] = infeasible({ tasksPerNode: 1, extraArgs: [], cpus: 999 }, nodes);
  assert.match(cpus!, /--cpus 999: no node of the default partition \(debug\) has more than 32 CPUs/);
  const short = infeasible(
    { tasksPerNode: 1, extraArgs: [], partition: 'short', gpus: 4, memMb: 2048, duration: 3600 },
    nodes,
  );
  assert.equal(short.length, 3);
  assert.match(short.join('\n'), /--gpus 4.*2 GPUs/);
  assert.match(short.join('\n'), /--mem 2G.*1000 MB/);
  assert.match(short.join('\n'), /--duration 01:00:00: partition short allows at most 00:30:00/);
});
