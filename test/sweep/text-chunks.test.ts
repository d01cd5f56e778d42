// TextChunks encodes text into one buffer as it is added (a sweep's files are written through it): whatever the
// texts — multi-byte characters, lone surrogates, texts longer than its room, flushed early or late — the file
// must hold exactly the UTF-8 of their concatenation.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { TextChunks } from '../../src/sweep/atomic-file.js';

const MB = 1 << 20;

/** A text: short ones of any characters, or one long run of a character (up to beyond the 4 MB room). */
const textArb = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 200 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('a', 'é', '€', '😀', '\ud800'), fc.integer({ min: 1, max: 3 * MB }))
      .map(([c, n]) => c.repeat(n)),
  },
);

test('TextChunks writes the UTF-8 of everything added, in order', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-chunks-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  fc.assert(
    fc.property(fc.array(textArb, { maxLength: 30 }), fc.boolean(), (texts, flushEarly) => {
      const file = path.join(dir, `f${n++}`);
      const fd = fs.openSync(file, 'w');
      try {
        const chunks = new TextChunks();
        for (const text of texts) {
          const full = chunks.add(text);
          // As its writers do: flush when it says so (and, sometimes, when it does not).
          if (full || (flushEarly && text.length % 3 === 0)) chunks.writeTo(fd);
        }
        chunks.writeTo(fd);
        chunks.writeTo(fd); // a second flush writes nothing more
      } finally {
        fs.closeSync(fd);
      }
      const got = fs.readFileSync(file);
      fs.rmSync(file);
      assert.ok(
        got.equals(Buffer.from(texts.join(''), 'utf8')),
        `${texts.length} texts, ${got.length} bytes`,
      );
    }),
    { numRuns: 60 },
  );
});

test('TextChunks asks to be written once a megabyte is gathered, and holds no more than its room', () => {
  const chunks = new TextChunks();
  assert.equal(chunks.add('x'.repeat(MB - 1)), false);
  assert.equal(chunks.add('é'), true, 'two bytes more than a megabyte less one');
  const fd = fs.openSync('/dev/null', 'w');
  try {
    chunks.writeTo(fd);
    assert.equal(chunks.add('y'), false, 'empty again after the write');
    assert.equal(chunks.add('z'.repeat(5 * MB)), true, 'a text longer than the room');
  } finally {
    fs.closeSync(fd);
  }
});
