import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Parsed } from '../../../src/backends/cluster/answer.js';
import { parseMaxAjTasks } from '../../../src/backends/gridengine/cluster-config.js';
import { parseErrorReasons, parseQacct, parseQstatXml } from '../../../src/backends/gridengine/parse.js';
import { parseJobcomp, parseSacct } from '../../../src/backends/slurm/accounting.js';
import { parseClusterConfig } from '../../../src/backends/slurm/cluster-config.js';
import { parseNodes } from '../../../src/backends/slurm/feasibility.js';
import { parseSqueue } from '../../../src/backends/slurm/squeue.js';
import { repoRoot } from '../../helpers/drover.js';

/**
 * Property: every parser of scheduler output either reads an answer whole or says it could not — fed real answers
 * of the test clusters (test/backends/samples/: Slurm 22.05 and Son of Grid Engine 8.1.9; sacct from the fake
 * Slurm, the test cluster has no slurmdbd) cut at any point, with junk lines in them, or replaced by another
 * command's answer. What a parser accepts never holds a fact the whole answer does not (an element, a state, an
 * exit code, a limit): so a cut or garbled answer cannot make drover judge a task from it.
 *
 * A line-by-line answer cut exactly at a line's end looks like a shorter whole one (squeue has no end marker);
 * the parser may take it, and then holds a part of the whole answer's facts. Cut anywhere else it must refuse.
 */

interface Subject {
  name: string;
  sample: string;
  parse(text: string): Parsed<unknown>;
  /** Its answer is one document with an end (qstat -xml): only the whole text parses. */
  document?: boolean;
  /** A file read while it grows (the job completion log): a last line without its newline is not read yet. */
  growing?: boolean;
  /** Every line must be of its format: a junk line makes the whole answer unreadable. */
  strictLines: boolean;
}

const sample = (name: string) => fs.readFileSync(path.join(repoRoot, 'test/backends/samples', name), 'utf8');

const SUBJECTS: Subject[] = [
  { name: 'squeue -r', sample: sample('slurm-squeue-r.txt'), parse: parseSqueue, strictLines: true },
  {
    name: 'squeue (folded)',
    sample: sample('slurm-squeue-folded.txt'),
    parse: parseSqueue,
    strictLines: true,
  },
  { name: 'sacct', sample: sample('slurm-sacct.txt'), parse: parseSacct, strictLines: true },
  {
    name: 'the job completion log',
    sample: sample('slurm-jobcomp.txt'),
    parse: (t) => parseJobcomp(t, new Set(['965', '966', '972', '973'])),
    growing: true,
    strictLines: false,
  },
  {
    name: 'scontrol show config',
    sample: sample('slurm-scontrol-show-config.txt'),
    parse: parseClusterConfig,
    strictLines: false,
  },
  { name: 'sinfo', sample: sample('slurm-sinfo.txt'), parse: parseNodes, strictLines: true },
  {
    name: 'qstat -xml',
    sample: sample('gridengine-qstat.xml'),
    parse: (t) => parseQstatXml(t),
    document: true,
    strictLines: true,
  },
  {
    name: 'qstat -j',
    sample: sample('gridengine-qstat-j.txt'),
    parse: parseErrorReasons,
    strictLines: false,
  },
  // `name value` lines of fields drover does not read may be any (a junk line can look like one).
  { name: 'qacct', sample: sample('gridengine-qacct.txt'), parse: parseQacct, strictLines: false },
  {
    name: 'qconf -sconf',
    sample: sample('gridengine-qconf-sconf.txt'),
    parse: parseMaxAjTasks,
    strictLines: false,
  },
];

/** The facts of a parsed answer, one JSON string each: map entries, an object's fields, or the value. */
function facts(value: unknown): string[] {
  const norm = (v: unknown): unknown => (v instanceof Map ? [...v].map(([k, x]) => [k, norm(x)]) : v);
  if (value instanceof Map) return [...value].map(([k, v]) => JSON.stringify([k, norm(v)]));
  if (Array.isArray(value)) return value.map((v) => JSON.stringify(v));
  if (value !== null && typeof value === 'object') return Object.entries(value).map((e) => JSON.stringify(e));
  return [JSON.stringify(value)];
}

function wholeFacts(s: Subject): Set<string> {
  const r = s.parse(s.sample);
  assert.ok(r.ok, `${s.name}: the real sample must parse whole (${r.ok || r.why})`);
  return new Set(facts(r.value));
}

/** Nothing the parser took from `text` is unknown to the whole answer. */
function assertPartOf(s: Subject, r: Parsed<unknown>, what: string): void {
  if (!r.ok) return;
  const known = wholeFacts(s);
  for (const f of facts(r.value))
    assert.ok(known.has(f), `${s.name}, ${what}: ${f} is not in the whole answer`);
}

/** Junk a broken answer may hold: messages clients print on stdout, binary noise, random text. */
const JUNK = fc.oneof(
  fc.constantFrom(
    'slurm_load_jobs error: Socket timed out on send/recv operation',
    'error: commlib error: got select error (Connection refused)',
    'Segmentation fault (core dumped)',
    '\u0000\u0000\u0000\u0000',
    '<html><body>502 Bad Gateway</body></html>',
  ),
  fc.string({ maxLength: 40 }).map((s) => `~${s.replace(/[\r\n]/g, ' ')}`),
);

test('the real samples parse whole, each with facts', () => {
  for (const s of SUBJECTS) assert.ok(wholeFacts(s).size > 0, `${s.name} holds facts`);
});

test('an answer cut anywhere is refused, or holds only facts of the whole (a cut at a line end)', () => {
  for (const s of SUBJECTS) {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: s.sample.length - 1 }), (cut) => {
        const text = s.sample.slice(0, cut);
        const r = s.parse(text);
        assertPartOf(s, r, `cut at ${cut}`);
        if (!r.ok || s.growing) return;
        const insideALine = text !== '' && !text.endsWith('\n');
        if (s.document || insideALine)
          assert.equal(text.trimEnd(), s.sample.trimEnd(), `${s.name}: took an answer cut at ${cut}`);
      }),
      { numRuns: 300 },
    );
    // Every cut inside the last line, the one the fakes' `truncate` fault makes (half the answer, in a line).
    const last = s.sample.trimEnd().lastIndexOf('\n') + 1;
    for (let cut = last + 1; cut < s.sample.trimEnd().length; cut++) {
      if (!s.growing) assert.equal(s.parse(s.sample.slice(0, cut)).ok, false, `${s.name}: cut at ${cut}`);
    }
  }
});

test('junk lines in an answer are refused (or, where other lines may be, hold no new fact)', () => {
  for (const s of SUBJECTS) {
    const lines = s.sample.split('\n');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: lines.length - 1 }), JUNK, (at, junk) => {
        const text = [...lines.slice(0, at), junk, ...lines.slice(at)].join('\n');
        const r = s.parse(text);
        if (s.strictLines) assert.equal(r.ok, false, `${s.name} took a junk line ${JSON.stringify(junk)}`);
        else assertPartOf(s, r, `junk line ${JSON.stringify(junk)}`);
      }),
      { numRuns: 100 },
    );
  }
});

test("another command's answer, or an error message printed with exit 0, is no answer", () => {
  const others = [
    ...SUBJECTS.map((s) => ({ name: s.name, text: s.sample })),
    { name: 'an error', text: 'error: commlib error: got select error (Connection refused)\n' },
  ];
  for (const s of SUBJECTS) {
    for (const o of others) {
      if (o.text === s.sample || (s.parse === parseSqueue && o.name.startsWith('squeue'))) continue;
      const r = s.parse(o.text);
      assert.ok(
        !r.ok || facts(r.value).length === 0,
        `${s.name} read ${o.name}'s answer as ${r.ok && facts(r.value).join(' ')}`,
      );
    }
  }
});
