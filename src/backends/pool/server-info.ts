import fs from 'node:fs';
import path from 'node:path';
import type { DroverPaths } from '../../paths.js';
import { isProcessAlive, shortHostname } from '../../util/proc.js';

/** What a running controller leaves in `.drover/server/server.json` for clients on this host. */
export interface ServerInfo {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  host: string;
  pid: number;
  pid_start: string | null;
  started_at: number;
}

/** Files of the controller of a `.drover/` folder. */
export function serverFiles(paths: DroverPaths) {
  const dir = path.join(paths.root, 'server');
  return {
    dir,
    info: path.join(dir, 'server.json'),
    /** The first user token, created on first start (mode 0600). */
    token: path.join(dir, 'token'),
    log: path.join(dir, 'server.log'),
  };
}

/** Files of one pool. */
export function poolFiles(paths: DroverPaths, pool: string) {
  const dir = path.join(paths.root, 'pools', pool);
  return {
    dir,
    /** The pool's worker token (mode 0600), given to the workers it starts. */
    workerToken: path.join(dir, 'worker-token'),
    workersDir: path.join(dir, 'workers'),
  };
}

/** The controller info of this folder, when its server.json exists. */
export function readServerInfo(paths: DroverPaths): ServerInfo | undefined {
  try {
    return JSON.parse(fs.readFileSync(serverFiles(paths).info, 'utf8')) as ServerInfo;
  } catch {
    return undefined;
  }
}

/** True when the controller of server.json is a live process on this host. */
export function serverAlive(info: ServerInfo): boolean {
  return info.host === shortHostname() && isProcessAlive(info.pid, info.pid_start);
}

/** Wake the controller of this folder (SIGUSR1: look at the database for new cancel requests). */
export function nudgeServer(paths: DroverPaths): void {
  const info = readServerInfo(paths);
  if (!info || !serverAlive(info)) return;
  try {
    process.kill(info.pid, 'SIGUSR1');
  } catch {
    // it ended meanwhile
  }
}
