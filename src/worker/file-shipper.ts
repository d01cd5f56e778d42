import fs from 'node:fs';
import { type ApiClient, ApiError } from '../protocol/client.js';
import { readRange } from '../protocol/log-slices.js';
import { FILE_CHUNK_BYTES, type FileAnswer } from '../protocol/messages.js';
import { type Backoff, retryDelay } from '../runner/backoff.js';
import { openTaskFile } from '../util/task-file.js';

/** How often the local files are looked at for new bytes while some are tailed (ms). */
const TAIL_MS = 200;
/** The wait before sending again after a failure: 0.25 s, doubling, at most 5 s (seconds). */
const RESEND: Backoff = { base: 0.25, max: 5, jitter: 0.2 };
/** How long one chunk may take (ms): a link that swallows it is cut and the chunk sent again. */
const CHUNK_TIMEOUT_MS = 15_000;

/** A local file sent to the controller, as the file `name` of the launch's log folder there. */
interface Tailed {
  launch: number;
  name: string;
  local: string;
  /** The controller has its bytes up to here. */
  sent: number;
  /** It was sent once (an empty file is made on the controller too). */
  touched: boolean;
  /** Ask the controller's offset first (an empty chunk) rather than send from 0. */
  resume: boolean;
  /** Index of a segment (`.idx`): looked at after the segments and sent before them (see pass). */
  index: boolean;
  /** The controller refused it for good (or it cannot be read here): nothing more of it is sent. */
  dead: boolean;
  /** Waiters for the bytes up to a size. */
  waiters: { upTo: number; done: () => void }[];
}

/**
 * Sends a worker's task logs and result files to the controller when it has no shared filesystem with it: tails
 * the local files and sends their new bytes in chunks of at most FILE_CHUNK_BYTES, one request at a time (so it
 * holds one chunk in memory, whatever the files), each at the offset the controller has. A failed request (a cut
 * link, a controller away) is sent again after a backoff from the offset the controller answers; a chunk is
 * idempotent there (bytes it has change nothing), and a gap answers with the offset to send from.
 */
export class FileShipper {
  private readonly files = new Map<string, Tailed>();
  private running = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly api: ApiClient,
    /** The worker's id ('' before it registered: nothing is sent). */
    private readonly id: () => string,
    private readonly log: (msg: string) => void,
  ) {}

  /**
   * Tail `local` as `name` in the launch's log folder on the controller (again: nothing changes). `resume`: the
   * controller may have some of it already (a slot's segments, tailed again for a later task of the launch): the
   * first request is empty, answered with the offset it has, and the bytes go from there.
   */
  tail(launch: number, name: string, local: string, resume = false): void {
    const key = `${launch}/${name}`;
    if (this.files.has(key)) return;
    const index = name.endsWith('.idx');
    this.files.set(key, {
      launch,
      name,
      local,
      sent: 0,
      touched: false,
      resume,
      index,
      dead: false,
      waiters: [],
    });
    this.soon();
  }

  /**
   * Resolves when the controller has the bytes of `name` up to `upTo`, at most the local file's size now (by
   * default all of them), or when they will never be sent (refused, unreadable, not there, or not tailed).
   */
  shipped(launch: number, name: string, upTo = Number.POSITIVE_INFINITY): Promise<void> {
    const f = this.files.get(`${launch}/${name}`);
    const size = f && !f.dead ? localSize(f.local) : undefined;
    if (!f || size === undefined) return Promise.resolve();
    const want = Math.min(upTo, size);
    if (f.sent >= want && f.touched) return Promise.resolve();
    return new Promise((done) => {
      f.waiters.push({ upTo: want, done });
      this.soon(true);
    });
  }

  /** Stop tailing a file (its waiters resolve). */
  forget(launch: number, name: string): void {
    const f = this.files.get(`${launch}/${name}`);
    if (!f) return;
    this.files.delete(`${launch}/${name}`);
    for (const w of f.waiters) w.done();
  }

  /** True while some file has bytes waited for. */
  get waiting(): boolean {
    return [...this.files.values()].some((f) => f.waiters.length > 0);
  }

  /** Stop: nothing more is sent, every waiter resolves. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const f of this.files.values()) for (const w of f.waiters.splice(0)) w.done();
  }

  /** Look at the files soon (`now`: at once, not after the tail interval; never inside a backoff). */
  private soon(now = false): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer && (!now || this.failures > 0)) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.pass();
      },
      now ? 0 : TAIL_MS,
    );
    this.timer.unref();
  }

  /**
   * One look at every file: sizes are taken segments first and indexes after, and indexes are sent first, so the
   * controller never has a segment's bytes of an attempt without the index entry of the attempt before it
   * (log-slices.ts: readers of a running attempt take the index's word for where it ends).
   */
  private async pass(): Promise<void> {
    if (this.closed || this.id() === '') {
      this.next(false);
      return;
    }
    this.running = true;
    this.again = false;
    const list = [...this.files.values()].filter((f) => !f.dead);
    const looked = [...list.filter((f) => !f.index), ...list.filter((f) => f.index)];
    const sizes = new Map(looked.map((f) => [f, localSize(f.local)] as const));
    let ok = true;
    for (const f of [...list.filter((f) => f.index), ...list.filter((f) => !f.index)]) {
      const size = sizes.get(f);
      if (size === undefined) {
        this.settle(f, Number.POSITIVE_INFINITY); // not there (yet): nothing to wait for now
        continue;
      }
      if (!(await this.send(f, size))) {
        ok = false;
        break;
      }
    }
    this.running = false;
    this.next(ok);
  }

  /** After a pass: again at once, after a backoff, or after the tail interval while anything is tailed. */
  private next(ok: boolean): void {
    if (this.closed) return;
    if (!ok) {
      this.failures++;
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.pass();
      }, retryDelay(this.failures, RESEND) * 1000);
      this.timer.unref();
      return;
    }
    this.failures = 0;
    if (this.again) this.soon(true);
    else if (this.files.size > 0) this.soon();
  }

  /** Send `f` up to `size`, chunk by chunk; false when the link or the controller failed (try again later). */
  private async send(f: Tailed, size: number): Promise<boolean> {
    while ((f.sent < size || !f.touched) && !f.dead && !this.closed) {
      const to = f.resume && !f.touched ? f.sent : Math.min(size, f.sent + FILE_CHUNK_BYTES);
      let bytes: Buffer;
      try {
        bytes = readRangeOf(f.local, f.sent, to);
      } catch (err) {
        this.give(f, `cannot read ${f.local}: ${(err as Error).message}`);
        return true;
      }
      const route = `/workers/${this.id()}/files/${f.launch}/${encodeURIComponent(f.name)}?offset=${f.sent}`;
      try {
        const a = await this.api.call<FileAnswer>('PUT', route, bytes, CHUNK_TIMEOUT_MS);
        f.sent = a.offset;
        f.touched = true;
      } catch (err) {
        if (err instanceof ApiError && err.code === 'gap' && err.offset !== undefined) {
          f.sent = err.offset; // the controller has less than we thought: from there
          continue;
        }
        if (isRefusal(err)) {
          this.give(f, `the controller refused ${f.name} of launch ${f.launch}: ${(err as Error).message}`);
          return true;
        }
        return false;
      }
      this.settle(f, f.sent);
    }
    return true;
  }

  /** Resolve the waiters of bytes the controller has (all of them when `upTo` is infinite). */
  private settle(f: Tailed, upTo: number): void {
    if (!f.touched && upTo !== Number.POSITIVE_INFINITY) return;
    f.waiters = f.waiters.filter((w) => {
      if (w.upTo > upTo) return true;
      w.done();
      return false;
    });
  }

  /** Nothing more of `f` will be sent: say why, once, and release its waiters. */
  private give(f: Tailed, why: string): void {
    f.dead = true;
    this.log(`${why}: not sent`);
    this.settle(f, Number.POSITIVE_INFINITY);
  }
}

/**
 * A refusal for good (bad name, not its own, too large, not a regular file there), not a failure to try again
 * (the link, 5xx, 408, 409 `busy` or `unknown-worker` while it registers again).
 */
function isRefusal(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  return [400, 403, 404, 413, 415].includes(err.status) || (err.status === 409 && err.code === 'conflict');
}

/** The size of a local file, or undefined when it is not there (or is not a regular file). */
function localSize(file: string): number | undefined {
  let fd: number;
  try {
    fd = openTaskFile(file);
  } catch {
    return undefined;
  }
  try {
    return fs.fstatSync(fd).size;
  } finally {
    fs.closeSync(fd);
  }
}

/** Bytes [from, to) of a local file (a regular file only: a task may have made its result file a FIFO). */
function readRangeOf(file: string, from: number, to: number): Buffer {
  const fd = openTaskFile(file);
  try {
    return readRange(fd, from, to);
  } finally {
    fs.closeSync(fd);
  }
}
