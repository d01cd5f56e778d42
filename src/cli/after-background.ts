import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { note } from './output.js';
import { self } from './self.js';
import type { Workspace } from './workspace.js';

/**
 * `launch --detach --after L` on the local backend: this same launch, without --detach, waits in a process of
 * its own (in its own session, its output in `.drover/after/`), and launches in the foreground when L has ended
 * well. Nothing is recorded until then, so `drover status` shows the launch once it runs.
 */
export function waitInBackground(ws: Workspace, after: string, argv: readonly string[]): number {
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
