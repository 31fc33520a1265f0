/**
 * Talks to a long-lived shell or interpreter one request at a time. The caller sends input that
 * makes the process print a marker line, `<marker> <status>`, on the marked streams when it is
 * done; output up to the marker is the request's output. The marker is random per request, so
 * output that merely looks like one cannot end a request early. Output that arrives between
 * requests (from background jobs) is kept and reported with the next request.
 */
import type { Readable } from 'node:stream';
import { BoundedOutput, defaultOutputLimitBytes, type OutputSink } from '../../contract/bounded-output.js';
import type { SandboxSession, SessionExit } from '../../contract/sandbox-types.js';

export type SessionStream = 'stdout' | 'stderr';

export interface SentinelExchangeOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Streams on which the process prints the marker line; the request is done when all have. */
  markedStreams: SessionStream[];
  /** Receive every byte of the request's output on each stream, the middle included. */
  outputSinks?: Partial<Record<SessionStream, OutputSink>>;
}

export interface SentinelExchangeResult {
  stdout: Buffer;
  stderr: Buffer;
  /** The status from the first marked stream's marker line; undefined when no marker came. */
  status: number | undefined;
  /** The session was killed because the request took longer than `timeoutMs`. */
  timedOut: boolean;
  aborted: boolean;
  /** Set when the session's process has ended (on its own, or killed after a timeout or abort). */
  exit: SessionExit | undefined;
  durationMs: number;
}

/** How long to wait for the last output once the process has exited. */
const drainGraceMs = 1000;

export class SentinelSession {
  private readonly watchers: Record<SessionStream, MarkerWatcher>;
  private exit: SessionExit | undefined;
  /** Requests run one at a time; concurrent callers wait their turn. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly session: SandboxSession,
    outputLimitBytes: number = defaultOutputLimitBytes,
  ) {
    this.watchers = {
      stdout: new MarkerWatcher(session.stdout, outputLimitBytes),
      stderr: new MarkerWatcher(session.stderr, outputLimitBytes),
    };
    void session.exited.then((exit) => {
      this.exit = exit;
    });
  }

  get running(): boolean {
    return this.session.running;
  }

  exchange(input: string | Buffer, marker: string, options: SentinelExchangeOptions): Promise<SentinelExchangeResult> {
    const turn = this.queue.then(() => this.exchangeNow(input, marker, options));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async exchangeNow(input: string | Buffer, marker: string, options: SentinelExchangeOptions): Promise<SentinelExchangeResult> {
    const started = performance.now();
    const marked = options.markedStreams.map((name) => this.watchers[name]);
    for (const watcher of marked) watcher.expect(marker);
    for (const name of ['stdout', 'stderr'] as const) this.watchers[name].attach(options.outputSinks?.[name]);

    let timedOut = false;
    let aborted = false;
    let stopRequested: () => void = () => {};
    const stopped = new Promise<void>((resolve) => {
      stopRequested = resolve;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      stopRequested();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      stopRequested();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    try {
      if (this.session.running && !aborted) this.session.stdin.write(input);
      const outcome = await Promise.race([
        Promise.all(marked.map((watcher) => watcher.found)).then(() => 'done' as const),
        this.session.exited.then(() => 'ended' as const),
        stopped.then(() => 'stopped' as const),
      ]);
      if (outcome === 'stopped') await this.session.kill();
      if (outcome !== 'done') await Promise.all(Object.values(this.watchers).map((watcher) => watcher.drained(drainGraceMs)));
      return {
        stdout: this.watchers.stdout.take(),
        stderr: this.watchers.stderr.take(),
        status: marked[0]?.status,
        timedOut,
        aborted,
        exit: outcome === 'done' ? undefined : (this.exit ?? (await this.session.exited)),
        durationMs: Math.round(performance.now() - started),
      };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      for (const watcher of marked) watcher.forget();
      for (const watcher of Object.values(this.watchers)) watcher.attach(undefined);
    }
  }

  kill(): Promise<void> {
    return this.session.kill();
  }
}

/** Collects one stream and notices the marker line in it, even when split across chunks. */
class MarkerWatcher {
  /** Output of the request in progress, or of background jobs between requests. */
  private current: BoundedOutput;
  /** Bytes held back from `current` because they may be the start of the marker line. */
  private pending: Buffer = Buffer.alloc(0);
  /** Output of the request whose marker has come, until taken. */
  private completed: Buffer | undefined;
  private marker: Buffer | undefined;
  private resolveFound: () => void = () => {};
  private ended = false;
  private readonly endWaiters: Array<() => void> = [];
  found: Promise<void> = Promise.resolve();
  status: number | undefined;

  constructor(
    stream: Readable,
    private readonly limitBytes: number,
  ) {
    this.current = new BoundedOutput(limitBytes);
    stream.on('data', (chunk: Buffer) => this.feed(chunk));
    const onEnd = () => {
      this.ended = true;
      for (const waiter of this.endWaiters.splice(0)) waiter();
    };
    stream.once('end', onEnd);
    stream.once('close', onEnd);
    stream.on('error', onEnd);
  }

  expect(marker: string): void {
    this.marker = Buffer.from(marker);
    this.status = undefined;
    this.found = new Promise((resolve) => {
      this.resolveFound = resolve;
    });
  }

  forget(): void {
    this.marker = undefined;
  }

  /** Output of the request in progress goes to `sink` too, until the request's output is taken. */
  attach(sink: OutputSink | undefined): void {
    this.current.attach(sink);
  }

  /** The request's output: up to its marker line, or everything so far when no marker came. */
  take(): Buffer {
    if (this.completed) {
      const output = this.completed;
      this.completed = undefined;
      return output;
    }
    this.current.write(this.pending);
    this.pending = Buffer.alloc(0);
    const output = this.current.toBuffer();
    this.current = new BoundedOutput(this.limitBytes);
    return output;
  }

  /** Settles when the stream has ended, or after `graceMs`. */
  drained(graceMs: number): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      this.endWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private feed(chunk: Buffer): void {
    if (!this.marker) {
      this.current.write(chunk);
      return;
    }
    const marker = this.marker;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const at = this.pending.indexOf(marker);
    const lineEnd = at === -1 ? -1 : this.pending.indexOf(0x0a, at + marker.length);
    if (at === -1) {
      // Hold back enough to match a marker cut by a chunk boundary, and the newline printed before it.
      const releasable = this.pending.length - (marker.length + 1);
      if (releasable > 0) {
        this.current.write(this.pending.subarray(0, releasable));
        this.pending = this.pending.subarray(releasable);
      }
      return;
    }
    if (lineEnd === -1) return;
    const statusText = this.pending.subarray(at + marker.length, lineEnd).toString('latin1').trim();
    // The process prints a newline before the marker so it starts a line; that newline is not output.
    this.current.write(this.pending.subarray(0, at > 0 && this.pending[at - 1] === 0x0a ? at - 1 : at));
    this.completed = this.current.toBuffer();
    this.current = new BoundedOutput(this.limitBytes);
    this.current.write(this.pending.subarray(lineEnd + 1));
    this.pending = Buffer.alloc(0);
    this.marker = undefined;
    this.status = /^-?\d+$/.test(statusText) ? Number(statusText) : undefined;
    this.resolveFound();
  }
}
