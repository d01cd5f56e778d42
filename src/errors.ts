/**
 * The one error shape drover throws. `code` says what kind of failure it is; `exitCode` is what the CLI exits
 * with (2 for bad usage or bad input, 1 for work that failed); `cause` keeps the underlying error.
 */
export type ErrorCode =
  | 'usage' // bad flags, bad values, bad names: exit 2, nothing written
  | 'not-found' // a job, task or launch that does not exist: exit 2
  | 'conflict' // the request clashes with what is on disk (e.g. +append to a corrupt jobfile): exit 2
  | 'backend' // a scheduler or process call failed: exit 1
  | 'internal'; // a bug: exit 1

export class DroverError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DroverError';
    this.code = code;
    this.exitCode = code === 'usage' || code === 'not-found' || code === 'conflict' ? 2 : 1;
  }
}

/** A usage error: one line naming the bad value and what to do; the CLI exits 2. */
export function usageError(message: string): DroverError {
  return new DroverError('usage', message);
}

/** Coerce anything thrown into a DroverError, keeping it as the cause. */
export function toDroverError(err: unknown): DroverError {
  if (err instanceof DroverError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new DroverError('internal', message, { cause: err });
}
