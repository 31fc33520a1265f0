/**
 * Deadlines for one streamed reply: the whole reply within the request timeout, and no gap between
 * chunks longer than the idle timeout. Either aborts the request, which closes its socket, and
 * leaves a retryable timeout error to throw in place of whatever the half-read stream produced.
 */
import { ProviderError } from '../../contract/errors.js';

export interface StreamDeadlines {
  /** The whole reply, from sending the request to its last chunk. */
  totalMs: number;
  /** The longest wait for the next chunk once the reply has started. */
  idleMs: number;
}

export class StreamWatchdog {
  /** Pass to the request: aborts on the caller's signal or on a missed deadline. */
  readonly signal: AbortSignal;
  /** Set once a deadline was missed. */
  failure?: ProviderError;
  private readonly controller = new AbortController();
  private readonly deadlines: StreamDeadlines;
  private readonly totalTimer: NodeJS.Timeout;
  private idleTimer?: NodeJS.Timeout;

  constructor(deadlines: StreamDeadlines, callerSignal: AbortSignal | undefined) {
    this.deadlines = deadlines;
    this.signal = callerSignal ? AbortSignal.any([callerSignal, this.controller.signal]) : this.controller.signal;
    this.totalTimer = setTimeout(() => {
      this.fail(`the reply did not finish within ${seconds(deadlines.totalMs)} s (timeout_seconds)`);
    }, deadlines.totalMs);
  }

  /** A chunk arrived (or the reply started): the idle wait starts again. */
  touch(): void {
    if (this.failure) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.fail(`the reply stream sent nothing for ${seconds(this.deadlines.idleMs)} s (stream_idle_timeout_seconds)`);
    }, this.deadlines.idleMs);
  }

  stop(): void {
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
  }

  private fail(message: string): void {
    this.failure = new ProviderError('timeout', message);
    this.stop();
    this.controller.abort(this.failure);
  }
}

function seconds(milliseconds: number): string {
  return String(Math.round(milliseconds) / 1000);
}
