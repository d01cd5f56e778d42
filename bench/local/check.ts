import { BenchError } from '../util.js';

/** Parse `drover status J --json` and check the job has `n` tasks, all succeeded. */
export function checkAllSucceeded(stdout: string, jobname: string, n: number): void {
  let s: { jobname?: string; tasks?: number; counts?: Record<string, number> };
  try {
    s = JSON.parse(stdout) as typeof s;
  } catch {
    throw new BenchError(`drover status ${jobname} --json printed no JSON object`);
  }
  const ok = s.jobname === jobname && s.tasks === n && s.counts?.succeeded === n;
  if (!ok) {
    throw new BenchError(
      `drover status ${jobname} --json: expected ${n} tasks, ${n} succeeded; got tasks ${s.tasks}, counts ${JSON.stringify(s.counts)}`,
    );
  }
}
