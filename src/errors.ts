/**
 * The one error shape drover throws. `code` says what kind of failure it is; `exitCode` is what the CLI exits
 * with (2 for bad usage or bad input, 1 for work or an environment that failed); `cause` keeps the underlying
 * error.
 */
export type ErrorCode =
  | 'usage' // bad flags, bad values, bad names: exit 2, nothing written
  | 'not-found' // a job, task or launch that does not exist: exit 2
  | 'conflict' // the request clashes with what is on disk (e.g. +append to a corrupt jobfile): exit 2
  | 'corrupt' // a file drover reads is damaged (a ledger that is not a database): exit 2
  | 'io' // the environment failed: disk full, read-only, permission denied, I/O error: exit 1
  | 'backend' // a scheduler or process call failed: exit 1
  | 'internal'; // a bug: exit 1

const BAD_INPUT: ReadonlySet<ErrorCode> = new Set(['usage', 'not-found', 'conflict', 'corrupt']);

export class DroverError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DroverError';
    this.code = code;
    this.exitCode = BAD_INPUT.has(code) ? 2 : 1;
  }
}

/** A usage error: one line naming the bad value and what to do; the CLI exits 2. */
export function usageError(message: string): DroverError {
  return new DroverError('usage', message);
}

/** What a failed system call says about the disk, and what the user can do about it. */
const ERRNO: Readonly<Record<string, { what: string; remedy: string }>> = {
  ENOSPC: { what: 'disk full', remedy: 'free space on that disk and run the command again' },
  EDQUOT: {
    what: 'disk quota exceeded',
    remedy: 'free space or raise your quota, and run the command again',
  },
  EROFS: { what: 'read-only file system', remedy: 'drover must write there: work in a writable folder' },
  EACCES: { what: 'permission denied', remedy: 'check the owner and mode of that path' },
  EPERM: { what: 'operation not permitted', remedy: 'check the owner and mode of that path' },
  EIO: {
    what: 'I/O error',
    remedy: 'the disk or network file system failed: check it (dmesg) and try again',
  },
  EFBIG: { what: 'file too large', remedy: 'free space or raise the file size limit (ulimit -f)' },
  EMFILE: { what: 'too many open files', remedy: 'raise the limit (ulimit -n) and try again' },
  ENFILE: { what: 'too many open files on this system', remedy: 'try again when fewer files are open' },
};

/** An error from a system call (Node's fs, child_process): it has an errno code such as ENOSPC. */
export interface SystemError extends Error {
  code: string;
  syscall?: string;
  path?: string;
  dest?: string;
}

/** True when `err` came from a failed system call. */
export function isSystemError(err: unknown): err is SystemError {
  return (
    err instanceof Error &&
    typeof (err as SystemError).code === 'string' &&
    /^E[A-Z0-9]+$/.test((err as SystemError).code)
  );
}

/** True when `err` is a disk that cannot take writes now: full, over quota, read-only, or failing. */
export function isDiskWriteError(err: unknown): boolean {
  return (
    isSystemError(err) && ['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EFBIG', 'EACCES', 'EPERM'].includes(err.code)
  );
}

/**
 * Describe a failed system call in one line, naming the path when known and what to do (`remedy`, else the
 * usual one; '' for none): `disk full at PATH (write): free space on that disk and run the command again`.
 */
export function describeSystemError(err: SystemError, file = err.path, remedy?: string): string {
  const known = ERRNO[err.code];
  const where = file ? ` at ${file}` : '';
  const call = err.syscall ? ` (${err.syscall})` : '';
  const then = remedy ?? known?.remedy;
  if (known) return `${known.what}${where}${call}${then ? `: ${then}` : ''}`;
  if (remedy !== undefined) return `${err.code}${where}${call}${then ? `: ${then}` : ''}`;
  const text = err.message.split('\n')[0]!.replace(/^E[A-Z0-9]+: /, '');
  return `${text}${file && !text.includes(file) ? ` (${file})` : ''}`;
}

/** A failed system call as a DroverError (`io`, exit 1) whose message names the path and what to do. */
export function ioError(err: SystemError, file?: string): DroverError {
  return new DroverError('io', describeSystemError(err, file ?? err.path), { cause: err });
}

/** Coerce anything thrown into a DroverError, keeping it as the cause. */
export function toDroverError(err: unknown): DroverError {
  if (err instanceof DroverError) return err;
  if (isSystemError(err)) return ioError(err);
  const message = err instanceof Error ? err.message : String(err);
  return new DroverError('internal', message, { cause: err });
}
