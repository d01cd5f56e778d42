import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { taskPage } from '../../src/ledger/dashboard.js';
import { STATES, type State } from '../../src/protocol/states.js';
import { makeJob, tempLedger } from '../helpers/ledger.js';

/**
 * The dashboard's task table is paged, filtered and sorted in SQL. Property: for random tasks (states, exit codes,
 * attempts, params with numbers and text, tags with LIKE's wildcards), every filter and sort gives what a plain
 * in-memory filter and sort give, and the pages put together are that list exactly — no task twice, none lost.
 */

interface Model {
  id: number;
  state: State;
  exit_code: number | null;
  attempts: number;
  tag: string;
  command: string;
  params: Record<string, string>;
}

const VALUES = ['1', '2', '10', '0.5', '-3', '1e3', 'abc', 'b', '', 'a_b', '50%'];
const SORTS = ['id', 'state', 'exit', 'attempts', 'tag', 'command', 'param:--x', 'param:--y'];

const isNumber = (v: string) => /[0-9]/.test(v) && !/[^0-9.eE+-]/.test(v);

function cmp(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The reference order: NULLs (missing) last whatever the direction, ties by id in the same direction. */
function sortModel(rows: Model[], sort: string, desc: boolean): Model[] {
  const d = desc ? -1 : 1;
  const key = (m: Model): unknown[] | null => {
    if (sort.startsWith('param:')) {
      const v = m.params[sort.slice(6)];
      if (v === undefined) return null;
      // Numbers first (in either direction), numeric among themselves, then text.
      return isNumber(v) ? [0, Number(v)] : [1, v];
    }
    const v = {
      id: m.id,
      state: m.state,
      exit: m.exit_code,
      attempts: m.attempts,
      tag: m.tag,
      command: m.command,
    }[sort];
    return v === null || v === undefined ? null : [v];
  };
  return [...rows].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka === null || kb === null) return ka === kb ? d * (a.id - b.id) : ka === null ? 1 : -1;
    if (sort.startsWith('param:') && ka[0] !== kb[0]) return (ka[0] as number) - (kb[0] as number);
    const c = cmp(ka.at(-1), kb.at(-1));
    return c !== 0 ? d * c : d * (a.id - b.id);
  });
}

const like = (text: string, needle: string) => text.toLowerCase().includes(needle.toLowerCase());

test('task pages: filters, sorts and paging agree with an in-memory model', { timeout: 120_000 }, (t) => {
  const ledger = tempLedger(t);
  let n = 0;
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          state: fc.constantFrom(...STATES),
          exit: fc.option(fc.integer({ min: 0, max: 3 })),
          attempts: fc.integer({ min: 0, max: 3 }),
          tag: fc.constantFrom('', 'a', 'A_b', '50%', 'x%y'),
          x: fc.option(fc.constantFrom(...VALUES)),
          y: fc.option(fc.constantFrom(...VALUES)),
        }),
        { minLength: 0, maxLength: 40 },
      ),
      fc.option(fc.subarray([...STATES], { minLength: 1 })),
      fc.constantFrom('', 'a', '_', '%', '5', 'B', 'echo 1'),
      fc.constantFrom(...SORTS),
      fc.boolean(),
      fc.integer({ min: 1, max: 7 }),
      (specs, states, text, sort, desc, limit) => {
        const job = makeJob(ledger, `j${++n}`, specs.length);
        const model: Model[] = specs.map((s, i) => {
          const params: Record<string, string> = {};
          if (s.x !== null) params['--x'] = s.x;
          if (s.y !== null) params['--y'] = s.y;
          return {
            id: i + 1,
            state: s.state,
            exit_code: s.exit,
            attempts: s.attempts,
            tag: s.tag,
            command: `echo ${i + 1}`,
            params,
          };
        });
        ledger.write(() => {
          for (const m of model) {
            ledger
              .stmt(
                'UPDATE tasks SET state = ?, exit_code = ?, tries = ?, tag = ?, params = ? WHERE job_id = ? AND id = ?',
              )
              .run(m.state, m.exit_code, m.attempts, m.tag, JSON.stringify(m.params), job.id, m.id);
          }
        });
        const want = sortModel(
          model.filter(
            (m) =>
              (states === null || states.includes(m.state)) &&
              (text === '' ||
                like(m.command, text) ||
                like(m.tag, text) ||
                like(JSON.stringify(m.params), text)),
          ),
          sort,
          desc,
        ).map((m) => m.id);
        const got: number[] = [];
        for (let offset = 0; ; offset += limit) {
          const page = taskPage(ledger, job.id, {
            ...(states !== null ? { states } : {}),
            text,
            sort,
            desc,
            offset,
            limit,
          });
          assert.equal(page.total, want.length);
          got.push(...page.rows.map((r) => r.id));
          if (page.rows.length < limit) break;
        }
        assert.deepEqual(
          got,
          want,
          `sort ${sort} ${desc ? 'desc' : 'asc'}, states ${states}, text ${JSON.stringify(text)}`,
        );
      },
    ),
    { numRuns: 300 },
  );
});
