/**
 * Time limits for browser work. Playwright has no timeout for evaluating a script, and a page
 * stuck in a loop never answers; these helpers give every wait an end.
 */

export class TimeLimitExceeded extends Error {
  readonly what: string;
  readonly timeoutMs: number;

  constructor(what: string, timeoutMs: number) {
    super(`${what} did not finish within ${formatSeconds(timeoutMs)}`);
    this.name = 'TimeLimitExceeded';
    this.what = what;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Settles with `work`, or rejects with TimeLimitExceeded after `timeoutMs`, or with the signal's
 * reason when it aborts. The work itself goes on in the background; its late failure is ignored.
 */
export function withTimeout<T>(work: Promise<T>, timeoutMs: number, what: string, signal?: AbortSignal): Promise<T> {
  work.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => finish(() => reject(signal!.reason));
    const timer = setTimeout(() => finish(() => reject(new TimeLimitExceeded(what, timeoutMs))), timeoutMs);
    let settled = false;
    function finish(settle: () => void) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then((value) => finish(() => resolve(value)), (error: unknown) => finish(() => reject(error)));
  });
}

export function formatSeconds(milliseconds: number): string {
  const seconds = milliseconds / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
