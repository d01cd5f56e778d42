import fs from 'node:fs';
import path from 'node:path';

/**
 * A FAKE Grid Engine (named as such) for what a real one cannot do on demand: refuse the second of two
 * identical submissions, report a small `max_aj_tasks` without changing a shared cluster's global config, or
 * fail `qconf -sconf`. Its qsub prints job ids 4242, 4243, ...; its qstat cannot be reached (reconciliation
 * leaves states alone); every call is logged, one line per call, program and arguments separated by tabs.
 */
export interface FakeOptions {
  /** What `qconf -sconf` says for max_aj_tasks; 'fail': qconf exits 1 as if the qmaster were down. */
  maxAjTasks: number | 'fail';
  /** Refuse the qsub calls after this many accepted ones. */
  acceptQsubs?: number;
}

/** The fake's bin folder (to put first on PATH) and its call log. */
export interface Fake {
  bin: string;
  calls: string;
  env: Record<string, string>;
}

/** Write the fake programs into `dir/fake-bin`. */
export function fakeGridEngine(dir: string, opts: FakeOptions): Fake {
  const bin = path.join(dir, 'fake-bin');
  const calls = path.join(dir, 'calls.log');
  const count = path.join(dir, 'qsub.count');
  fs.mkdirSync(bin);
  const log = `(IFS=$(printf '\\t'); printf '%s\\n' "$(basename "$0")$IFS$*") >> '${calls}'`;
  const write = (name: string, body: string) =>
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${log}\n${body}\n`, { mode: 0o755 });
  write(
    'qconf',
    opts.maxAjTasks === 'fail'
      ? 'echo "error: commlib error: got select error (Connection refused)" >&2; exit 1'
      : `printf '#global:\\nmax_aj_instances             2000\\nmax_aj_tasks                 ${opts.maxAjTasks}\\n'`,
  );
  write(
    'qsub',
    [
      `n=$(cat '${count}' 2>/dev/null || echo 0)`,
      `if [ "$n" -ge ${opts.acceptQsubs ?? 1000} ]; then echo 'Unable to run job: denied: the fake refuses this one' >&2; echo Exiting. >&2; exit 1; fi`,
      `echo $((n + 1)) > '${count}'`,
      'echo "$((4242 + n)).1-2:1"',
    ].join('\n'),
  );
  write('qdel', 'exit 0');
  write('qstat', 'exit 1');
  write('qacct', 'exit 1');
  return { bin, calls, env: { PATH: `${bin}:${process.env.PATH ?? ''}` } };
}

/** The logged calls: [program, ...args] each. */
export function fakeCalls(fake: Fake): string[][] {
  if (!fs.existsSync(fake.calls)) return [];
  return fs
    .readFileSync(fake.calls, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t'));
}
