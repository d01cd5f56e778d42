/**
 * Runs only the pool scale benchmark (bench/pool-scale.ts): `node dist/bench/pool-scale-run.js`, with
 * DROVER_BENCH_SCALE_TASKS=N for another task count than 1,000,000.
 */
import { runPool } from './pool.js';
import { resultLine } from './result.js';

const results = runPool({ repeat: 1, only: ['scale'] }, (r) => process.stdout.write(`${resultLine(r)}\n`));
for (const r of results) for (const n of [...r.checks, ...r.notes]) process.stdout.write(`  ${r.id}: ${n}\n`);
process.exit(results.some((r) => r.verdict === 'FAILED') ? 1 : 0);
