import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { killLeftovers } from './workspace.js';

/**
 * Real full and read-only disks for tests: a tmpfs with a size limit, a read-only bind mount. Mounting needs
 * root (CI runs as root); tests that need it skip with a notice otherwise. Everything mounted is unmounted
 * after the test, also when it fails.
 */

/** True when this process may mount. */
export const isRoot = process.getuid?.() === 0;

/** Why a test that mounts is skipped here, or undefined when it can run. */
export const needsRoot = isRoot ? undefined : 'needs root to mount a tmpfs or a read-only bind mount';

/** Something with `after` hooks: a node:test TestContext. */
interface HasAfter {
  after(fn: () => void | Promise<void>): void;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Unmount `dir`, waiting for processes that still use it; lazily as a last resort. */
function unmount(dir: string): void {
  for (let i = 0; i < 50; i++) {
    try {
      execFileSync('umount', [dir], { stdio: 'ignore' });
      return;
    } catch {
      sleepSync(100);
    }
  }
  execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
}

/**
 * A fresh folder on a tmpfs of its own of `size` (e.g. `2m`): a disk that fills up. After the test, what its
 * launches left running is killed, and it is unmounted and removed.
 */
export function tmpfsFolder(t: HasAfter, size: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-disk-')));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  t.after(async () => {
    await killLeftovers(dir);
    unmount(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/**
 * A fresh temporary folder to run drover in (as tempWorkspace), where the test may make folders read-only with
 * `readOnly` (a read-only bind mount of a folder on itself: root cannot write it either). After the test, the
 * mounts are undone first, then what its launches left running is killed and the folder removed.
 */
export function mountableWorkspace(t: HasAfter): { dir: string; readOnly(sub: string): () => void } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-ro-')));
  const undos: (() => void)[] = [];
  t.after(async () => {
    for (const undo of undos.reverse()) undo();
    await killLeftovers(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const readOnly = (sub: string) => {
    execFileSync('mount', ['--bind', sub, sub]);
    let mounted = true;
    const undo = () => {
      if (!mounted) return;
      mounted = false;
      unmount(sub);
    };
    undos.push(undo);
    execFileSync('mount', ['-o', 'remount,bind,ro', sub]);
    return undo;
  };
  return { dir, readOnly };
}

/** Fill the disk of `dir` to the last block with a file; returns it (remove it to free the space). */
export function fillDisk(dir: string): string {
  const file = path.join(dir, 'ballast');
  const fd = fs.openSync(file, 'a');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  // The last blocks, smaller than a chunk.
  try {
    for (;;) fs.writeSync(fd, chunk, 0, 512);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

/**
 * A gate that holds tasks back until a test fills a disk, however fast the machine runs them: `hold(id, first)`
 * is a shell line that lets the tasks whose id (`id`, a shell word such as "$1") is at most `first` through at once
 * and makes the others wait until `open()`. The gate is a file off the test's disk, removed with the test.
 */
export function taskGate(t: HasAfter): { hold(id: string, first: number): string; open(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-gate-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const gate = path.join(dir, 'open');
  return {
    hold: (id, first) => `[ ${id} -le ${first} ] || while [ ! -e '${gate}' ]; do sleep 0.02; done`,
    open: () => fs.writeFileSync(gate, ''),
  };
}
