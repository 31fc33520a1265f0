import { afterEach, describe, expect, it } from 'vitest';
import { readModelProfile } from '../runtime/runs/recipe/load-agents.js';
import { ModelClient } from '../runtime/services/model/model-client.js';
import { resolveModelConnection } from '../runtime/services/model/model-connection.js';
import { RateLimiter, sharedRateLimiter, type RateWaitNotice } from '../runtime/services/model/rate-limiter.js';
import { scriptedModelName, startScriptedModelServer, type ScriptedModelServer } from './support/scripted-model-server.js';

const windowMs = 200;

function settled<T>(promise: Promise<T>): { done: () => boolean } {
  let finished = false;
  promise.then(() => { finished = true; }, () => { finished = true; });
  return { done: () => finished };
}

const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

describe('rate limiter', () => {
  it('holds the request past the requests-per-window limit until the oldest leaves the window', async () => {
    const limiter = new RateLimiter({ requestsPerMinute: 2 }, { windowMs });
    const waits: RateWaitNotice[] = [];
    const started = performance.now();
    (await limiter.acquire(0)).release();
    (await limiter.acquire(0)).release();
    expect(performance.now() - started).toBeLessThan(50);
    (await limiter.acquire(0, undefined, (notice) => waits.push(notice))).release();
    expect(performance.now() - started).toBeGreaterThanOrEqual(windowMs - 5);
    expect(waits).toHaveLength(1);
    expect(waits[0].limit).toBe('requests_per_minute');
    expect(waits[0].waitMs).toBeGreaterThanOrEqual(windowMs - 20);
  });

  it('lets no more than max_concurrent requests be open at once', async () => {
    const limiter = new RateLimiter({ maxConcurrent: 1 }, { windowMs: 60_000 });
    const first = await limiter.acquire(0);
    const waits: RateWaitNotice[] = [];
    const second = limiter.acquire(0, undefined, (notice) => waits.push(notice));
    const state = settled(second);
    await pause(60);
    expect(state.done()).toBe(false);
    const releasedAt = performance.now();
    first.release();
    (await second).release();
    expect(performance.now() - releasedAt).toBeLessThan(30);
    expect(waits[0].limit).toBe('max_concurrent');
    expect(waits[0].waitMs).toBeGreaterThanOrEqual(50);
  });

  it('spends a token budget counted from the estimate and corrected by the reply', async () => {
    const limiter = new RateLimiter({ tokensPerMinute: 100 }, { windowMs });
    const started = performance.now();
    const estimatedHigh = await limiter.acquire(80);
    estimatedHigh.settle(10);
    estimatedHigh.release();
    // The correction freed the budget: 10 + 80 fits.
    const fits = await limiter.acquire(80);
    fits.settle(85);
    fits.release();
    expect(performance.now() - started).toBeLessThan(50);
    const waits: RateWaitNotice[] = [];
    (await limiter.acquire(30, undefined, (notice) => waits.push(notice))).release();
    expect(performance.now() - started).toBeGreaterThanOrEqual(windowMs - 5);
    expect(waits[0].limit).toBe('tokens_per_minute');
  });

  it('lets a request larger than the whole budget go alone in an empty window', async () => {
    const limiter = new RateLimiter({ tokensPerMinute: 100 }, { windowMs });
    const started = performance.now();
    (await limiter.acquire(500)).release();
    expect(performance.now() - started).toBeLessThan(50);
  });

  it('stops waiting when the signal aborts, and leaves the limiter usable', async () => {
    const limiter = new RateLimiter({ maxConcurrent: 1 }, { windowMs: 60_000 });
    const first = await limiter.acquire(0);
    const controller = new AbortController();
    const waiting = limiter.acquire(0, controller.signal);
    await pause(20);
    controller.abort(new Error('stopped by the user'));
    await expect(waiting).rejects.toThrow('stopped by the user');
    first.release();
    const started = performance.now();
    (await limiter.acquire(0)).release();
    expect(performance.now() - started).toBeLessThan(30);
  });

  it('pauses every waiter until the Retry-After of a 429, then halves the request rate', async () => {
    const limiter = new RateLimiter({ requestsPerMinute: 4 }, { windowMs });
    (await limiter.acquire(0)).release();
    limiter.slowDown(100);
    const waits: RateWaitNotice[] = [];
    const started = performance.now();
    await Promise.all([0, 1].map(async () => (await limiter.acquire(0, undefined, (notice) => waits.push(notice))).release()));
    const elapsed = performance.now() - started;
    // Both waited out the pause; the second then met the halved rate (2 per window, one already spent).
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(waits.map((notice) => notice.limit).sort()).toEqual(['provider_rate_limit', 'provider_rate_limit']);
  });

  it('is one limiter per profile name, endpoint and model', () => {
    const settings = { maxConcurrent: 1 };
    const identity = { profileName: 'shared-test', baseUrl: 'http://127.0.0.1:1/v1', model: 'm' };
    expect(sharedRateLimiter(identity, settings)).toBe(sharedRateLimiter({ ...identity }, settings));
    expect(sharedRateLimiter({ ...identity, model: 'other' }, settings)).not.toBe(sharedRateLimiter(identity, settings));
    expect(sharedRateLimiter(identity, undefined)).toBeUndefined();
  });
});

describe('rate limit shared by model clients', () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('makes a second client wait out the 429 the first one got', async () => {
    server = await startScriptedModelServer({
      turns: [{ fault: { kind: 'status', status: 429, retryAfter: '0.4' } }, { content: 'one' }, { content: 'two' }],
    });
    const profile = readModelProfile('limited', { base_url: server.baseUrl, model: scriptedModelName, rate_limit: { max_concurrent: 4 } });
    const environment = { OPENAI_API_KEY: 'test-key' };
    const firstWaits: RateWaitNotice[] = [];
    const secondWaits: RateWaitNotice[] = [];
    let retried!: () => void;
    const retryNoticed = new Promise<void>((resolve) => { retried = resolve; });
    const first = new ModelClient(await resolveModelConnection(profile, environment), { onRetry: () => retried(), onRateWait: (notice) => firstWaits.push(notice) });
    const second = new ModelClient(await resolveModelConnection(profile, environment), { onRateWait: (notice) => secondWaits.push(notice) });
    const messages = [{ role: 'user' as const, content: 'hello' }];
    const firstReply = first.complete({ messages });
    await retryNoticed;
    const noticedAt = performance.now();
    const secondReply = await second.complete({ messages });
    expect(performance.now() - noticedAt).toBeGreaterThanOrEqual(350);
    expect(['one', 'two']).toContain(secondReply.content);
    expect((await firstReply).attempts).toBe(2);
    expect(secondWaits).toEqual([{ waitMs: expect.any(Number), limit: 'provider_rate_limit' }]);
    expect(secondWaits[0].waitMs).toBeGreaterThanOrEqual(350);
    expect(firstWaits[0].limit).toBe('provider_rate_limit');
    // Nothing reached the provider during the pause.
    const [rejected, ...answered] = server.requests;
    for (const request of answered) expect(request.receivedAt - rejected.repliedAt!).toBeGreaterThanOrEqual(350);
  });
});
