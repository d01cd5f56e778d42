import path from 'node:path';
import cliProgress from 'cli-progress';
import type { RunObserver } from '../backends/backend.js';
import { TERMINAL_STATES, type TerminalState } from '../protocol/states.js';
import type { TaskEnd } from '../runner/runner.js';
import { paintBad, paintState } from './colour.js';
import { formatDuration } from './output.js';

/** Where the live view draws, and how it names a task (its sweep values or tag; '' for none). */
export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  tty?: boolean;
  label?: (task: number) => string;
}

/** Seconds between the summary lines on anything that is not a terminal. */
const LINE_EVERY_MS = 5000;

/**
 * Live progress of a foreground launch on stderr: a bar with counts, rate and ETA on a terminal; on anything
 * else, a summary line (with the ETA) every 5 seconds. Either way, every task that fails, is killed, times out
 * or is lost is printed as it happens (above the bar on a terminal): its id, its sweep values or tag, its exit
 * code or signal, how long it ran and where its stderr is.
 */
export class Progress implements RunObserver {
  private readonly counts: Partial<Record<TerminalState | 'running', number>> = {};
  private done = 0;
  private readonly t0 = Date.now();
  private readonly multi: cliProgress.MultiBar | undefined;
  private readonly bar: cliProgress.SingleBar | undefined;
  private readonly ticker: NodeJS.Timeout | undefined;
  private readonly stream: NodeJS.WriteStream;
  private readonly label: (task: number) => string;

  constructor(
    private readonly total: number,
    private readonly job: string,
    options: ProgressOptions = {},
  ) {
    this.stream = options.stream ?? process.stderr;
    this.label = options.label ?? (() => '');
    if (options.tty ?? this.stream.isTTY === true) {
      this.multi = new cliProgress.MultiBar(
        {
          format: ' {bar} {percentage}% | {value}/{total} | {states} | {rate}/s | ETA {left}',
          stream: this.stream,
          hideCursor: true,
          clearOnComplete: false,
          stopOnComplete: false,
          fps: 8,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar = this.multi.create(total, 0, this.payload());
    } else {
      this.ticker = setInterval(() => this.line(), LINE_EVERY_MS);
      this.ticker.unref();
    }
  }

  started(): void {
    this.counts.running = (this.counts.running ?? 0) + 1;
    this.bar?.update(this.done, this.payload());
  }

  ended(end: TaskEnd): void {
    if (end.attempt > 0) this.counts.running = (this.counts.running ?? 1) - 1;
    if (!end.willRetry) {
      this.done++;
      this.counts[end.state] = (this.counts[end.state] ?? 0) + 1;
    }
    this.report(end);
    this.bar?.update(this.done, this.payload());
  }

  /** Show counts read from the ledger (`drover watch`): running, and the tasks done in each final state. */
  sync(counts: Partial<Record<TerminalState | 'running', number>>): void {
    Object.assign(this.counts, counts);
    this.done = TERMINAL_STATES.reduce((n, s) => n + (this.counts[s] ?? 0), 0);
    this.bar?.update(this.done, this.payload());
  }

  /** Print an attempt that did not succeed (nothing for a success or a cancel). */
  report(end: TaskEnd): void {
    if (end.state !== 'succeeded' && end.state !== 'cancelled')
      this.say(`${paintBad(this.failure(end), this.stream)}\n`);
  }

  /** The terminal went away: draw nothing more. */
  detach(): void {
    if (this.ticker) clearInterval(this.ticker);
  }

  /** Stop the display (the bar stays on screen with its final values). */
  stop(): void {
    if (this.ticker) clearInterval(this.ticker);
    if (this.multi) {
      this.bar!.update(this.done, this.payload());
      // One last redraw, which also writes the lines logged since the last one (stop writes only the bar).
      (this.multi as unknown as { update(): void }).update();
      this.multi.stop();
    } else this.line();
  }

  /** `task 7 (--lr=0.1) failed: exit 3 after 1.2s, will retry — stderr: .drover/logs/lr/1/7.1.err` */
  private failure(end: TaskEnd): string {
    const label = this.label(end.task);
    const how = end.signal ?? (end.exitCode !== null ? `exit ${end.exitCode}` : '');
    const why = end.reason !== undefined && end.reason !== '' ? ` (${end.reason})` : '';
    const took = end.seconds !== null ? ` after ${formatDuration(end.seconds)}` : '';
    const err =
      end.err !== null ? ` — stderr: ${shortPath(end.err)}` : ` — drover logs ${this.job} ${end.task} --err`;
    return `task ${end.task}${label !== '' ? ` (${label})` : ''} attempt ${end.attempt} ${end.state}${how !== '' ? `: ${how}` : ''}${why}${took}${end.requeue ? ', requeued' : end.willRetry ? ', will retry' : ''}${err}`;
  }

  /** A line above the bar on a terminal; a line of its own otherwise. */
  private say(text: string): void {
    if (this.multi) this.multi.log(text);
    else this.stream.write(text);
  }

  private elapsed(): number {
    return (Date.now() - this.t0) / 1000;
  }

  private rate(): string {
    const s = this.elapsed();
    return s > 0 ? (this.done / s).toFixed(1) : '0';
  }

  /**
   * Time left at the pace so far (tasks done per second since the start, which counts the slots the running
   * tasks fill), or – until a task has ended: before that, nothing tells how long tasks take.
   */
  private eta(): string {
    if (this.done === 0) return this.done === this.total ? '0s' : '–';
    const left = this.total - this.done;
    return formatDuration((left * this.elapsed()) / this.done);
  }

  private states(): string {
    const order: (TerminalState | 'running')[] = ['running', ...TERMINAL_STATES];
    return order
      .filter((s) => (this.counts[s] ?? 0) > 0 || s === 'succeeded' || s === 'failed')
      .map((s) => paintState(s, `${s} ${this.counts[s] ?? 0}`, this.stream))
      .join(' ');
  }

  /** The bar's fields (`left`, not `eta`: cli-progress fills `{eta}` with its own estimate). */
  private payload(): { states: string; rate: string; left: string } {
    return { states: this.states(), rate: this.rate(), left: this.eta() };
  }

  private line(): void {
    const elapsed = formatDuration(this.elapsed());
    this.stream.write(
      `[${elapsed}] ${this.done}/${this.total} done | ${this.states()} | ${this.rate()}/s | ETA ${this.eta()}\n`,
    );
  }
}

/** A log path as the user can type it from here: relative when it is under the working folder. */
function shortPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}
