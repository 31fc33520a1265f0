import { ManusError } from '../../../contract/errors.js';

const queueErrorMarker = 'manus.error.QueueError';
const queueErrorSymbol = Symbol.for(queueErrorMarker);

/** The queue's Redis refused what a batch asked of it (not its being away, which only pauses). */
export class QueueError extends ManusError {
  private readonly [queueErrorSymbol] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super('queue_failed', message, options);
  }

  static isInstance(error: unknown): error is QueueError {
    return ManusError.hasMarker(error, queueErrorMarker);
  }
}
