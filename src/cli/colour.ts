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

/** The colour functions, made once (picocolors decides nothing here: colourOn does). */
const C = pc.createColors(true);

const STATE_PAINT: Record<State, Paint> = {
  pending: C.dim,
  queued: C.blue,
  running: C.cyan,
  succeeded: C.green,
  failed: C.red,
  killed: C.magenta,
  timeout: C.yellow,
  cancelled: C.dim,
  lost: C.red,
  error: C.red,
};

/** `text` in the colour of `state`, when `stream` gets colours; as it is otherwise. */
export function paintState(state: State, text: string, stream: NodeJS.WriteStream = process.stdout): string {
  return colourOn(stream) ? STATE_PAINT[state](text) : text;
}

/** Red (a failure's line), when `stream` gets colours. */
export function paintBad(text: string, stream: NodeJS.WriteStream = process.stderr): string {
  return colourOn(stream) ? C.red(text) : text;
}
