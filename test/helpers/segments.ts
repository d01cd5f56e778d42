import assert from 'node:assert/strict';
import fs from 'node:fs';
import fc from 'fast-check';
import { extentOf, isEmptySlice, type LogPlace, readRange } from '../../src/protocol/log-slices.js';

/**
 * What the segment tests share (test/runner/log-segments*.test.ts): a task that writes chunks to stdout and
 * stderr and each byte to a side file of its own too (the oracle), its random shapes, and how a slice is read.
 *
 * A `late` task leaves a child in its process group that writes a marker naming its attempt 0.5 s later. drover
 * kills what a task left in its group once it has reaped the task, so the marker is written only when the reap
 * comes more than 0.5 s after the task's start of exit: under load (issue 37: a fresh clone's `npm test` beside
 * other work), or with the process starter stopped for a while (test/runner/log-segments.test.ts does so). The
 * marker is then its own attempt's output, written by its group before drover saw it end, and belongs at the end
 * of its own slice: it may be there, and it must never be in another attempt's.
 */

export const WRITER = `import json, os, sys, time
spec = json.loads(sys.argv[1])
task, att = os.environ['DROVER_TASK_ID'], os.environ['DROVER_ATTEMPT']
os.makedirs('expect', exist_ok=True)
exp = {s: open('expect/%s.%s.%s' % (task, att, s), 'wb') for s in ('out', 'err')}
for stream, size, pause in spec['chunks']:
    unit = ('<%s.%s.%s>' % (task, att, stream)).encode()
    data = (unit * (size // len(unit) + 1))[:size]
    os.write(1 if stream == 'out' else 2, data)
    exp[stream].write(data)
    exp[stream].flush()
    time.sleep(pause / 1000)
if spec['late'] and os.fork() == 0:
    time.sleep(0.5)
    os.write(1, b'<late %s.%s>' % (task.encode(), att.encode()))
    os._exit(0)
sys.exit(spec['exit'] if att == '1' else 0)
`;

export interface TaskSpec {
  chunks: ['out' | 'err', number, number][];
  late: boolean;
  exit: number;
}

const chunk = fc.tuple(
  fc.constantFrom<'out' | 'err'>('out', 'err'),
  fc.oneof(fc.constantFrom(0, 1, 65_536, 70_001), fc.nat(3000)),
  fc.constantFrom(0, 0, 5, 30),
);
export const taskSpec: fc.Arbitrary<TaskSpec> = fc.record({
  chunks: fc.array(chunk, { maxLength: 4 }),
  late: fc.boolean(),
  exit: fc.constantFrom(0, 0, 1),
});

/** What a late child of an attempt writes, if it outlives the attempt's end by long enough to write at all. */
export function lateMarker(task: number, attempt: number): Buffer {
  return Buffer.from(`<late ${task}.${attempt}>`);
}

/**
 * Asserts that `got`, an attempt's slice of `stream`, is exactly what the attempt wrote (`expected`, its oracle
 * file), followed on stdout by its own late marker when it is late and the marker came before its reap.
 */
export function assertOwnSlice(
  got: Buffer,
  expected: Buffer,
  at: { task: number; attempt: number; stream: 'out' | 'err'; late: boolean },
): void {
  const own =
    at.late && at.stream === 'out' ? Buffer.concat([expected, lateMarker(at.task, at.attempt)]) : null;
  assert.ok(
    got.equals(expected) || own?.equals(got),
    `task ${at.task} attempt ${at.attempt} ${at.stream}: ${got.length} bytes, wrote ${expected.length}` +
      `${at.late ? ' (and may have a late marker)' : ''}: ${JSON.stringify(got.subarray(-80).toString())}`,
  );
}

export function slice(place: LogPlace, stream: 'out' | 'err'): Buffer {
  if (isEmptySlice(place)) return Buffer.alloc(0);
  const fd = fs.openSync(place.path!, 'r');
  try {
    const e = extentOf(fd, place, stream);
    assert.equal(e.final, true, 'an ended attempt has its end');
    return readRange(fd, e.start, e.end);
  } finally {
    fs.closeSync(fd);
  }
}
