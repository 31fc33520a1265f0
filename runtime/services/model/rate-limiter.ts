/**
 * One limiter per model profile and endpoint, shared by every client in the process: parallel
 * steps, sub-agents and batches spend one budget of requests, tokens and open requests. A request
 * waits for room instead of failing; a 429 pauses everyone until the provider's Retry-After and
 * halves a configured request rate until a whole window passes without another.
 */
import type { RateLimitSettings } from '../../config/types.js';
import { abortableSleep } from './abortable-sleep.js';

export type RateLimitKind = 'requests_per_minute' | 'tokens_per_minute' | 'max_concurrent' | 'provider_rate_limit';

export interface RateWaitNotice {
  waitMs: number;
  /** The limit that held the request longest. */
  limit: RateLimitKind;
}

export interface RateLimiterClock {
  now(): number;
  sleep(milliseconds: number, signal?: AbortSignal): Promise<void>;
}

export interface RateLimiterOptions {
  /** The length of the sliding window; a minute unless a test shortens it. */
  windowMs?: number;
  clock?: RateLimiterClock;
}

/** A request admitted by the limiter: correct its token count from the reply, release it when done. */
export interface RateLimitPermit {
  settle(tokens: number): void;
  release(): void;
}

interface WindowEntry {
  time: number;
  tokens: number;
}

const minuteMs = 60_000;

/**
 * What a model client asks before each request. The process's own limiter keeps the window in
 * memory; workers of a queued batch share one kept in Redis, so their requests add up to one rate.
 */
export interface RequestRateLimiter {
  readonly settings: RateLimitSettings;
  /** Waits until the request fits every limit, then counts it. Rejects with the signal's reason on abort. */
  acquire(estimatedTokens: number, signal?: AbortSignal, onWait?: (notice: RateWaitNotice) => void): Promise<RateLimitPermit>;
  /** The provider said 429: requests wait out its Retry-After. */
  slowDown(retryAfterMs: number): void;
}

export interface RateLimiterIdentity {
  profileName: string;
  baseUrl: string;
  model: string;
}

export class RateLimiter implements RequestRateLimiter {
  readonly settings: RateLimitSettings;
  private readonly windowMs: number;
  private readonly clock: RateLimiterClock;
  private readonly entries: WindowEntry[] = [];
  private active = 0;
  private pausedUntil = 0;
  private slowedUntil = 0;
  private readonly listeners = new Set<() => void>();

  constructor(settings: RateLimitSettings, options: RateLimiterOptions = {}) {
    this.settings = settings;
    this.windowMs = options.windowMs ?? minuteMs;
    this.clock = options.clock ?? realClock;
  }

  /** Waits until the request fits every limit, then counts it. Rejects with the signal's reason on abort. */
  async acquire(estimatedTokens: number, signal?: AbortSignal, onWait?: (notice: RateWaitNotice) => void): Promise<RateLimitPermit> {
    const waited = new Map<RateLimitKind, number>();
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const blocked = this.blocker(estimatedTokens);
      if (!blocked) break;
      const started = this.clock.now();
      await this.waitFor(blocked.waitMs, signal);
      waited.set(blocked.limit, (waited.get(blocked.limit) ?? 0) + (this.clock.now() - started));
    }
    const entry: WindowEntry = { time: this.clock.now(), tokens: estimatedTokens };
    this.entries.push(entry);
    this.active += 1;
    const total = [...waited.values()].reduce((sum, value) => sum + value, 0);
    if (waited.size > 0 && onWait) {
      const [limit] = [...waited.entries()].sort((left, right) => right[1] - left[1])[0];
      onWait({ waitMs: Math.round(total), limit });
    }
    let released = false;
    return {
      settle: (tokens) => {
        entry.tokens = tokens;
        this.notify();
      },
      release: () => {
        if (released) return;
        released = true;
        this.active -= 1;
        this.notify();
      },
    };
  }

  /** The provider said 429: everyone waits out its Retry-After, and a configured request rate halves for a window. */
  slowDown(retryAfterMs: number): void {
    const now = this.clock.now();
    this.pausedUntil = Math.max(this.pausedUntil, now + Math.max(0, retryAfterMs));
    this.slowedUntil = this.pausedUntil + this.windowMs;
    this.notify();
  }

  /** Why a request cannot go now and how long until it might, or undefined when it can. */
  private blocker(estimatedTokens: number): { limit: RateLimitKind; waitMs: number } | undefined {
    const now = this.clock.now();
    while (this.entries.length > 0 && this.entries[0].time + this.windowMs <= now) this.entries.shift();
    if (this.pausedUntil > now) return { limit: 'provider_rate_limit', waitMs: this.pausedUntil - now };
    const { maxConcurrent, requestsPerMinute, tokensPerMinute } = this.settings;
    // A slot frees only on release, which notifies; the timeout is a safety net, not a poll.
    if (maxConcurrent !== undefined && this.active >= maxConcurrent) return { limit: 'max_concurrent', waitMs: this.windowMs };
    const requestLimit = this.requestLimit(now);
    if (requestLimit !== undefined && this.entries.length >= requestLimit) {
      const oldest = this.entries[this.entries.length - requestLimit];
      return { limit: this.slowedUntil > now && requestsPerMinute !== undefined && requestLimit < requestsPerMinute ? 'provider_rate_limit' : 'requests_per_minute', waitMs: oldest.time + this.windowMs - now };
    }
    if (tokensPerMinute !== undefined && this.entries.length > 0) {
      let spent = this.entries.reduce((sum, entry) => sum + entry.tokens, 0);
      // A request larger than the whole budget goes alone in an empty window rather than never.
      if (spent + estimatedTokens > tokensPerMinute) {
        for (const entry of this.entries) {
          spent -= entry.tokens;
          if (spent + estimatedTokens <= tokensPerMinute || spent <= 0) {
            return { limit: 'tokens_per_minute', waitMs: Math.max(1, entry.time + this.windowMs - now) };
          }
        }
      }
    }
    return undefined;
  }

  private requestLimit(now: number): number | undefined {
    const { requestsPerMinute } = this.settings;
    if (requestsPerMinute === undefined || this.slowedUntil <= now) return requestsPerMinute;
    // After a 429 the configured rate proved too high for what the provider grants now.
    return Math.max(1, Math.floor(requestsPerMinute / 2));
  }

  private waitFor(milliseconds: number, signal?: AbortSignal): Promise<void> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let wake!: () => void;
    const changed = new Promise<void>((resolve) => {
      wake = resolve;
    });
    this.listeners.add(wake);
    const sleeping = this.clock.sleep(milliseconds, controller.signal).catch(() => undefined);
    return Promise.race([sleeping, changed]).finally(() => {
      this.listeners.delete(wake);
      signal?.removeEventListener('abort', onAbort);
      controller.abort();
      if (signal?.aborted) throw signal.reason;
    });
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

const realClock: RateLimiterClock = {
  now: () => performance.now(),
  sleep: abortableSleep,
};

const sharedLimiters = new Map<string, RequestRateLimiter>();

export type RateLimiterFactory = (identity: RateLimiterIdentity, settings: RateLimitSettings) => RequestRateLimiter;

let limiterFactory: RateLimiterFactory = (_identity, settings) => new RateLimiter(settings);

/** Makes the process's limiters from now on with `factory` (a worker's, shared through Redis). */
export function useRateLimiterFactory(factory: RateLimiterFactory): void {
  limiterFactory = factory;
  sharedLimiters.clear();
}

/**
 * The process's limiter for a profile at an endpoint and model, made on first use. The first
 * settings seen for a key win: one process reads one configuration.
 */
export function sharedRateLimiter(identity: RateLimiterIdentity, settings: RateLimitSettings | undefined): RequestRateLimiter | undefined {
  if (!settings) return undefined;
  const key = rateLimiterKey(identity);
  let limiter = sharedLimiters.get(key);
  if (!limiter) {
    limiter = limiterFactory(identity, settings);
    sharedLimiters.set(key, limiter);
  }
  return limiter;
}

export function rateLimiterKey(identity: RateLimiterIdentity): string {
  return JSON.stringify([identity.profileName, identity.baseUrl, identity.model]);
}
