import pc from 'picocolors';
import type { State } from '../protocol/states.js';

/**
 * Colours for states, on a terminal only: never when the stream is not a TTY (a pipe, a file, a CI log), when
 * NO_COLOR is set to anything (no-color.org), when TERM is `dumb`, or after `--no-color`.
 */

let refused = false;

/** `--no-color` was given: no colours for the rest of this command. */
export function refuseColour(): void {
  refused = true;
}

/** Whether output to `stream` gets colours. */
export function colourOn(stream: NodeJS.WriteStream): boolean {
  const env = process.env;
  return !refused && stream.isTTY === true && !(env.NO_COLOR ?? '') && env.TERM !== 'dumb';
}

type Paint = (text: string) => string;

const STATE_PAINT: Record<State, (c: ReturnType<typeof pc.createColors>) => Paint> = {
  pending: (c) => c.dim,
  queued: (c) => c.blue,
  running: (c) => c.cyan,
  succeeded: (c) => c.green,
  failed: (c) => c.red,
  killed: (c) => c.magenta,
  timeout: (c) => c.yellow,
  cancelled: (c) => c.dim,
  lost: (c) => c.red,
  error: (c) => c.red,
};

/** `text` in the colour of `state`, when `stream` gets colours; as it is otherwise. */
export function paintState(state: State, text: string, stream: NodeJS.WriteStream = process.stdout): string {
  if (!colourOn(stream)) return text;
  return STATE_PAINT[state](pc.createColors(true))(text);
}

/** Red (a failure's line), when `stream` gets colours. */
export function paintBad(text: string, stream: NodeJS.WriteStream = process.stderr): string {
  return colourOn(stream) ? pc.createColors(true).red(text) : text;
}
