import fs from 'node:fs';
import path from 'node:path';
import { HttpError } from './http-error.js';
import { type LiveLaunch, type LiveWorker, taskKey } from './live.js';

/**
 * Files that a worker without a shared filesystem sends (`PUT /v1/workers/:id/files/:launch/:name`): the
 * controller writes them where the worker would have written them on a shared one, in the launch's log folder, so
 * `drover logs`, `results` and the dashboard read them unchanged. A worker may write only the files of its own
 * attempts and its own segments, only in a launch of its pool, only while it holds a task there; and only at the
 * end of what the controller has (bytes it has already change nothing; a gap is refused with its offset).
 */

/** The largest offset a chunk may name: past it, no log is real (1 TiB). */
export const MAX_FILE_OFFSET = 2 ** 40;

/** An attempt's own file: `<task>.<attempt>.out|err|result.json`. */
const ATTEMPT_FILE = /^([1-9]\d{0,14})\.([1-9]\d{0,8})\.(out|err|result\.json)$/;
/** A worker's segment or its index: `<worker-id>.<slot>.out|err|idx`. */
const SEGMENT_FILE = /^(.+)\.(0|[1-9]\d{0,5})\.(out|err|idx)$/;

/** The launch a worker's file goes to: an open launch of its pool in which it holds a task. */
function launchOf(launches: ReadonlyMap<number, LiveLaunch>, w: LiveWorker, launch: string): LiveLaunch {
  const id = /^[1-9]\d{0,14}$/.test(launch) ? Number(launch) : undefined;
  const l = id !== undefined ? launches.get(id) : undefined;
  if (!l) {
    throw new HttpError(
      404,
      'not-found',
      `no open pool launch '${launch.slice(0, 40)}': a worker sends files only of launches it runs tasks of`,
    );
  }
  const holds = [...w.held.values()].some((h) => h.launch === l.id);
  if (l.pool !== w.pool || !holds) {
    throw new HttpError(
      403,
      'not-yours',
      `worker ${w.id} holds no task of launch ${l.id}: it may send files only of launches it runs tasks of`,
    );
  }
  return l;
}

/**
 * Where a worker's file goes on the controller: a file of its launch's log folder that is its own to write, by a
 * name of the two grammars above (nothing else: no folder, no `..`), else a 400 or a 403 naming it.
 */
export function fileTarget(
  launches: ReadonlyMap<number, LiveLaunch>,
  w: LiveWorker,
  launch: string,
  name: string,
): string {
  const l = launchOf(launches, w, launch);
  const segments = l.settings.logs === 'segments';
  const a = ATTEMPT_FILE.exec(name);
  if (a) {
    const [task, attempt, kind] = [Number(a[1]), Number(a[2]), a[3]!];
    if (kind !== 'result.json' && segments) {
      throw new HttpError(
        400,
        'bad-request',
        `launch ${l.id} keeps its logs in segments: '${name}' is not one of its files (send the segments)`,
      );
    }
    if (w.held.get(taskKey(l.id, task))?.attempt !== attempt) {
      throw new HttpError(
        403,
        'not-yours',
        `worker ${w.id} does not hold task ${task} attempt ${attempt} of launch ${l.id}: it may send only its own attempts' files`,
      );
    }
    return path.join(l.settings.logDir, name);
  }
  const s = SEGMENT_FILE.exec(name);
  if (s && s[1] === w.id) {
    if (!segments) {
      throw new HttpError(
        400,
        'bad-request',
        `launch ${l.id} keeps a log file per attempt: '${name}' is not one of its files`,
      );
    }
    if (Number(s[2]) >= Math.max(1, w.slots)) {
      throw new HttpError(
        400,
        'bad-request',
        `worker ${w.id} has ${w.slots} slot(s): it has no segment '${name}'`,
      );
    }
    return path.join(l.settings.logDir, name);
  }
  throw new HttpError(
    400,
    'bad-request',
    `'${name.slice(0, 80)}' is not a file a worker may send: TASK.ATTEMPT.out|err|result.json, or ${w.id}.SLOT.out|err|idx`,
  );
}

/** The offset of a chunk from its query string: a whole number of bytes from 0 to MAX_FILE_OFFSET. */
export function chunkOffset(raw: unknown): number {
  const ok = typeof raw === 'string' && /^(0|[1-9]\d{0,15})$/.test(raw) && Number(raw) <= MAX_FILE_OFFSET;
  if (!ok) {
    throw new HttpError(
      400,
      'bad-request',
      `'offset' must be a whole number of bytes from 0 to ${MAX_FILE_OFFSET}, not '${String(raw).slice(0, 40)}'`,
    );
  }
  return Number(raw);
}

/** The bytes the controller has of a file (0 when it has none). */
function sizeOf(file: string): number {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st && !st.isFile()) {
    throw new HttpError(409, 'conflict', `${path.basename(file)} is not a regular file on the controller`);
  }
  return st?.size ?? 0;
}

/**
 * Put `bytes` at `offset` of `file` (synchronously: no other chunk of it comes between the size and the write).
 * Those the file already has change nothing; a chunk that would leave a gap is refused (409 `gap`, the offset to
 * send from). Returns the file's size after. Written with O_APPEND and O_NOFOLLOW: never through a symlink.
 */
export function writeChunk(file: string, offset: number, bytes: Buffer): number {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const size = sizeOf(file);
  if (offset > size) {
    throw new HttpError(
      409,
      'gap',
      `the controller has ${size} bytes of ${path.basename(file)}, not ${offset}: send from ${size}`,
      undefined,
      size,
    );
  }
  const fresh = bytes.subarray(Math.min(bytes.length, size - offset));
  if (fresh.length === 0 && size > 0) return size;
  const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW } = fs.constants;
  const fd = fs.openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0o644);
  try {
    let done = 0;
    while (done < fresh.length) done += fs.writeSync(fd, fresh, done);
  } finally {
    fs.closeSync(fd);
  }
  return size + fresh.length;
}
