/**
 * Collects a stream's bytes within a fixed memory budget: the first half of the budget and the
 * last half are kept, the middle is counted and dropped. A command that prints gigabytes costs
 * the runtime no more than the budget.
 */

export const defaultOutputLimitBytes = 8 * 1024 * 1024;

/** Receives every byte of a stream as it arrives, whatever the bounded copy drops (a saved-output file). */
export interface OutputSink {
  write(chunk: Buffer): void;
}

export class BoundedOutput {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly head: Buffer[] = [];
  private headLength = 0;
  private tail: Buffer[] = [];
  private tailLength = 0;
  private total = 0;
  private sink: OutputSink | undefined;

  constructor(limitBytes: number = defaultOutputLimitBytes, sink?: OutputSink) {
    this.headLimit = Math.ceil(limitBytes / 2);
    this.tailLimit = Math.floor(limitBytes / 2);
    this.sink = sink;
  }

  /** Sends what is kept so far, then every later byte, to `sink` too; undefined stops that. */
  attach(sink: OutputSink | undefined): void {
    if (sink && this.total > 0) sink.write(this.toBuffer());
    this.sink = sink;
  }

  get totalBytes(): number {
    return this.total;
  }

  get omittedBytes(): number {
    return this.total - this.headLength - this.tailLength;
  }

  write(chunk: Buffer): void {
    this.sink?.write(chunk);
    this.total += chunk.length;
    let rest = chunk;
    if (this.headLength < this.headLimit) {
      const taken = rest.subarray(0, this.headLimit - this.headLength);
      this.head.push(taken);
      this.headLength += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0 || this.tailLimit === 0) return;
    this.tail.push(rest);
    this.tailLength += rest.length;
    this.trimTail();
  }

  /** The kept bytes, with a one-line note where the middle was dropped. */
  toBuffer(): Buffer {
    const omitted = this.omittedBytes;
    if (omitted === 0) return Buffer.concat([...this.head, ...this.tail]);
    const note = Buffer.from(`\n[... ${omitted} bytes of output omitted ...]\n`);
    return Buffer.concat([...this.head, note, ...this.tail]);
  }

  private trimTail(): void {
    let excess = this.tailLength - this.tailLimit;
    while (excess > 0) {
      const first = this.tail[0];
      if (first.length <= excess) {
        this.tail.shift();
        this.tailLength -= first.length;
        excess -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailLength -= excess;
        excess = 0;
      }
    }
  }
}
