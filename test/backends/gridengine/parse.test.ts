import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  isErrorState,
  parseErrorReasons,
  parseQacct,
  parseQstatXml,
} from '../../../src/backends/gridengine/parse.js';
import { wholeValue } from '../answers.js';

/** `qstat -xml` of Son of Grid Engine 8.1.9 (trimmed): two running elements, a pending range, an Eqw range. */
const QSTAT = `<?xml version='1.0'?>
<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd">
  <queue_info>
    <job_list state="running">
      <JB_job_number>20</JB_job_number>
      <JAT_prio>0.50000</JAT_prio>
      <JB_name>tryA</JB_name>
      <state>r</state>
      <queue_name>all.q@vm</queue_name>
      <slots>1</slots>
      <tasks>1</tasks>
    </job_list>
    <job_list state="running">
      <JB_job_number>20</JB_job_number>
      <state>dr</state>
      <tasks>2</tasks>
    </job_list>
  </queue_info>
  <job_info>
    <job_list state="pending">
      <JB_job_number>20</JB_job_number>
      <state>qw</state>
      <tasks>3-7:2</tasks>
    </job_list>
    <job_list state="pending">
      <JB_job_number>21</JB_job_number>
      <state>Eqw</state>
      <queue_name></queue_name>
      <tasks>9,10</tasks>
    </job_list>
    <job_list state="pending">
      <JB_job_number>22</JB_job_number>
      <state>hqw</state>
      <tasks>1-2:1</tasks>
    </job_list>
  </job_info>
</job_info>`;

test('qstat -xml: running elements one by one, pending ones as ranges', () => {
  const q = wholeValue(parseQstatXml(QSTAT));
  assert.deepEqual(
    [...q.get('20')!],
    [
      [1, 'r'],
      [2, 'dr'],
      [3, 'qw'],
      [5, 'qw'],
      [7, 'qw'],
    ],
  );
  assert.deepEqual(
    [...q.get('21')!],
    [
      [9, 'Eqw'],
      [10, 'Eqw'],
    ],
  );
  assert.equal(q.get('22')!.get(2), 'hqw');
  assert.deepEqual([...wholeValue(parseQstatXml(QSTAT, new Set(['21']))).keys()], ['21']);
  const empty = "<?xml version='1.0'?><job_info><queue_info></queue_info><job_info></job_info></job_info>\n";
  assert.equal(wholeValue(parseQstatXml(empty)).size, 0);
  assert.equal(parseQstatXml(QSTAT.slice(0, -20)).ok, false, 'cut short');
  const selfClosed = QSTAT.replace('<queue_name></queue_name>', '<queue_name/>');
  assert.deepEqual(wholeValue(parseQstatXml(selfClosed)), q);
  assert.equal(parseQstatXml(QSTAT.replace('<tasks>3-7:2</tasks>', '<tasks>3-</tasks>')).ok, false);
  assert.equal(parseQstatXml(QSTAT.replace('  <job_info>\n', '  <job_info>\nerror: x\n')).ok, false);
});

test('error states are those with an E', () => {
  assert.equal(isErrorState('Eqw'), true);
  assert.equal(isErrorState('Ehqw'), true);
  assert.equal(isErrorState('qw'), false);
  assert.equal(isErrorState('dr'), false);
});

test('qstat -j: error reasons by element, without time stamp and prefix', () => {
  const text = `job_number:                 20
job-array tasks:            2-6:2
error reason          2:      11/30/2026 01:53:09 [0:8216]: error: can't open output file "/data/out/": No such file or directory
error reason          4:      11/30/2026 01:53:09 [0:8157]: error: can't open output file "/data/out/": No such file or directory
scheduling info:            Job is in error state
`;
  assert.deepEqual(
    [...wholeValue(parseErrorReasons(text))],
    [
      [2, 'can\'t open output file "/data/out/": No such file or directory'],
      [4, 'can\'t open output file "/data/out/": No such file or directory'],
    ],
  );
  assert.equal(parseErrorReasons(text.slice(0, text.indexOf('scheduling'))).ok, false, 'cut short');
});

test('qacct: failure code, exit status, whether it started; the last record of an element wins', () => {
  const rec = (
    task: number,
    failed: string,
    exit: string,
    start = 'Mon Nov 30 01:53:08 2026',
  ) => `==============================================================
qname        all.q
jobname      J
jobnumber    20
taskid       ${task}
start_time   ${start}
failed       ${failed}
exit_status  ${exit}
ru_wallclock 21s
`;
  const text = [
    rec(1, '0    ', '3'),
    rec(2, '37  : qmaster enforced h_rt, h_cpu, or h_vmem limit', '137                  (Killed)'),
    rec(3, '26  : opening input/output file', '0', '-/-'),
    rec(4, '0', '1'),
    rec(4, '0', '0'),
  ].join('');
  const a = wholeValue(parseQacct(text));
  assert.deepEqual(a.get('20.1'), {
    job: '20',
    index: 1,
    failed: 0,
    failedText: '',
    exitStatus: 3,
    started: true,
  });
  assert.deepEqual(a.get('20.2'), {
    job: '20',
    index: 2,
    failed: 37,
    failedText: 'qmaster enforced h_rt, h_cpu, or h_vmem limit',
    exitStatus: 137,
    started: true,
  });
  assert.equal(a.get('20.3')!.started, false);
  assert.equal(a.get('20.3')!.failed, 26);
  assert.equal(a.get('20.4')!.exitStatus, 0);
  assert.equal(parseQacct(text.slice(0, text.indexOf('exit_status  3') + 12)).ok, false, 'cut in a line');
  assert.equal(
    parseQacct(text.replace('exit_status  3\n', '')).ok,
    false,
    'a record without its exit status',
  );
});
