import cliProgress from 'cli-progress';
import type { RunObserver } from '../backends/backend.js';
import type { TerminalState } from '../protocol/states.js';
import { formatDuration } from './output.js';

/**
 * Live progress of a foreground launch on stderr: a bar with counts, rate and ETA on a terminal; on anything
 * else, one line per failed task and a summary line every few seconds.
 */
export class Progress implements RunObserver {
  private readonly counts: Partial<Record<TerminalState | 'running', number>> = {};
  private done = 0;
  private readonly t0 = Date.now();
  private readonly bar: cliProgress.SingleBar | undefined;
  private readonly ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly total: number,
    private readonly job: string,
    tty: boolean = process.stderr.isTTY === true,
  ) {
    if (tty) {
      this.bar = new cliProgress.SingleBar(
        {
          format: ' {bar} {percentage}% | {value}/{total} | {states} | {rate}/s | ETA {eta_formatted}',
          stream: process.stderr,
          hideCursor: true,
          clearOnComplete: false,
          etaBuffer: 200,
          fps: 8,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(total, 0, this.payload());
    } else {
      this.ticker = setInterval(() => this.line(), 5000);
      this.ticker.unref();
    }
  }

  started(): void {
    this.counts.running = (this.counts.running ?? 0) + 1;
    this.bar?.update(this.done, this.payload());
  }

  ended(
    task: number,
    attempt: number,
    state: TerminalState,
    exitCode: number | null,
    willRetry: boolean,
  ): void {
    if (attempt > 0) this.counts.running = (this.counts.running ?? 1) - 1;
    if (!willRetry) {
      this.done++;
      this.counts[state] = (this.counts[state] ?? 0) + 1;
    }
    if (state !== 'succeeded' && state !== 'cancelled') {
      const what = exitCode !== null ? `${state} (exit ${exitCode})` : state;
      const msg = `task ${task} attempt ${attempt} ${what}${willRetry ? ', will retry' : ''} — drover logs ${this.job} ${task} --err`;
      if (this.bar) this.bar.update(this.done, this.payload());
      if (!this.bar) process.stderr.write(`${msg}\n`);
    }
    this.bar?.update(this.done, this.payload());
  }

  /** The terminal went away: draw nothing more. */
  detach(): void {
    if (this.ticker) clearInterval(this.ticker);
  }

  /** Stop the display (the bar stays on screen with its final values). */
  stop(): void {
    if (this.ticker) clearInterval(this.ticker);
    if (this.bar) this.bar.stop();
    else this.line();
  }

  private rate(): string {
    const s = (Date.now() - this.t0) / 1000;
    return s > 0 ? (this.done / s).toFixed(1) : '0';
  }

  private states(): string {
    const order: (TerminalState | 'running')[] = [
      'running',
      'succeeded',
      'failed',
      'killed',
      'timeout',
      'cancelled',
    ];
    return order
      .filter((s) => (this.counts[s] ?? 0) > 0 || s === 'succeeded' || s === 'failed')
      .map((s) => `${s} ${this.counts[s] ?? 0}`)
      .join(' ');
  }

  private payload(): { states: string; rate: string } {
    return { states: this.states(), rate: this.rate() };
  }

  private line(): void {
    const elapsed = formatDuration((Date.now() - this.t0) / 1000);
    process.stderr.write(
      `[${elapsed}] ${this.done}/${this.total} done | ${this.states()} | ${this.rate()}/s\n`,
    );
  }
}
