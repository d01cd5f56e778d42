import assert from 'node:assert/strict';
import fs from 'node:fs';
import fc from 'fast-check';
import { extentOf, isEmptySlice, type LogPlace, readRange } from '../../src/protocol/log-slices.js';

/**
 * What the segment tests share (test/runner/log-segments*.test.ts): a task that writes chunks to stdout and
 * stderr and each byte to a side file of its own too (the oracle), its random shapes, and how a slice is read.
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
    os.write(1, b'LATE')
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
