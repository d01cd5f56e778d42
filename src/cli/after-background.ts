import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterNow, launchesToWaitFor, waitForLaunches } from '../launch/after.js';
import type { LaunchSpec } from '../launch/spec.js';
import { note } from './output.js';
import { self } from './self.js';
import type { Workspace } from './workspace.js';

/**
 * `launch --after L` on the local backend: wait for L to end (in the background with --detach), and say why
 * nothing is launched when it did not end well. Undefined: go on and launch; a number: the exit code, now.
 */
export async function localAfter(
  ws: Workspace,
  spec: LaunchSpec,
  after: string,
  argv: readonly string[],
): Promise<number | undefined> {
  const waitFor = launchesToWaitFor(ws.ledger, after);
  const ids = waitFor.map((l) => l.id).join(',');
  if (spec.detach) return waitInBackground(ws, ids, argv);
  // A dry run does not wait: it says what the launch would wait for, or how L ended if it has.
  const ended = spec.dryRun
    ? afterNow(ws.ledger, waitFor)
    : await waitForLaunches(ws.ledger, waitFor, (open) =>
        note(`drover: waiting for launch ${open.join(', ')} to end (--after)...`),
      );
  if ('open' in ended)
    note(
      `drover: --after ${ids}: would wait for launch ${ended.open.join(', ')} to end, and launch only if every task of ${ids} succeeded`,
    );
  else if (!ended.ok) {
    note(`drover: --after ${ids}: ${ended.why}: nothing ${spec.dryRun ? 'would be ' : ''}launched`);
    return 1;
  }
  return undefined;
}

/**
 * `launch --detach --after L` on the local backend: this same launch, without --detach, waits in a process of
 * its own (in its own session, its output in `.drover/after/`), and launches in the foreground when L has ended
 * well. Nothing is recorded until then, so `drover status` shows the launch once it runs.
 */
function waitInBackground(ws: Workspace, after: string, argv: readonly string[]): number {
  const dir = path.join(ws.paths.root, 'after');
  fs.mkdirSync(dir, { recursive: true });
  const log = path.join(dir, `${Date.now()}-${process.pid}.log`);
  const fd = fs.openSync(log, 'a');
  const args = [self.bin, ...argv.filter((a) => a !== '--detach'), '--quiet'];
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', fd, fd],
    cwd: process.cwd(),
  });
  fs.closeSync(fd);
  child.unref();
  note(
    `drover: waiting in the background for launch ${after} to end well (pid ${child.pid}; output in ${log})`,
  );
  return 0;
}
