import type { AttemptKey } from '../protocol/messages.js';

/** An HTTP error with its status and code (the one error type of the API). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** With `not-yours`: the refused attempts. */
    readonly refused?: AttemptKey[],
    /** With `gap`: the bytes the controller has of the file (send from there). */
    readonly offset?: number,
  ) {
    super(message);
  }
}
