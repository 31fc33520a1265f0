/**
 * A model profile's rate_limit held across every worker of a queue: token buckets for requests
 * and tokens per minute kept in Redis and taken from atomically by a Lua script, so ten workers
 * send what one configuration allows, not ten times it. A 429 pauses all of them. Each process
 * still keeps its own max_concurrent, which is about its own connections.
 */
import type { Redis } from 'ioredis';
import type { RateLimitSettings } from '../../../config/types.js';
import { abortableSleep } from '../../../services/model/abortable-sleep.js';
import { RateLimiter, rateLimiterKey, type RateLimitPermit, type RateLimiterIdentity, type RateWaitNotice, type RequestRateLimiter } from '../../../services/model/rate-limiter.js';
import { createHash } from 'node:crypto';
import { rateBucketKey } from './queue-protocol.js';

/** Takes one request and `tokens` from the buckets, or says how many milliseconds until they would fit. */
const takeScript = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[1])
local requestsPerWindow = tonumber(ARGV[2])
local tokensPerWindow = tonumber(ARGV[3])
local tokens = tonumber(ARGV[4])
local paused = tonumber(redis.call('HGET', KEYS[1], 'paused') or '0')
if paused > now then return {paused - now, 'provider_rate_limit'} end
local function level(field, capacity)
  local value = tonumber(redis.call('HGET', KEYS[1], field) or capacity)
  local at = tonumber(redis.call('HGET', KEYS[1], field .. ':at') or now)
  return math.min(capacity, value + (now - at) * capacity / window)
end
local wait, limit = 0, ''
local requests, bucketTokens
if requestsPerWindow > 0 then
  requests = level('requests', requestsPerWindow)
  if requests < 1 then wait = math.ceil((1 - requests) * window / requestsPerWindow); limit = 'requests_per_minute' end
end
if tokensPerWindow > 0 then
  bucketTokens = level('tokens', tokensPerWindow)
  local needed = math.min(tokens, tokensPerWindow)
  if bucketTokens < needed then
    local tokenWait = math.ceil((needed - bucketTokens) * window / tokensPerWindow)
    if tokenWait > wait then wait = tokenWait; limit = 'tokens_per_minute' end
  end
end
if wait > 0 then return {wait, limit} end
if requestsPerWindow > 0 then redis.call('HSET', KEYS[1], 'requests', tostring(requests - 1), 'requests:at', now) end
if tokensPerWindow > 0 then redis.call('HSET', KEYS[1], 'tokens', tostring(bucketTokens - tokens), 'tokens:at', now) end
redis.call('PEXPIRE', KEYS[1], window * 2)
return {0, ''}
`;

/** Gives back (or takes more of) the tokens a request was estimated at, once its reply says what it used. */
const settleScript = `
local value = redis.call('HGET', KEYS[1], 'tokens')
if value then redis.call('HSET', KEYS[1], 'tokens', tostring(tonumber(value) - tonumber(ARGV[1]))) end
return 0
`;

/** Every worker waits out a provider's Retry-After. */
const pauseScript = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local resumeAt = now + tonumber(ARGV[1])
local paused = tonumber(redis.call('HGET', KEYS[1], 'paused') or '0')
if resumeAt > paused then redis.call('HSET', KEYS[1], 'paused', resumeAt) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 0
`;

const minuteMs = 60_000;

export class RedisRateLimiter implements RequestRateLimiter {
  private readonly local: RateLimiter;
  private readonly key: string;
  private readonly windowMs: number;

  constructor(private readonly redis: Redis, identity: RateLimiterIdentity, readonly settings: RateLimitSettings, options: { windowMs?: number } = {}) {
    // The process's own limiter keeps only what is the process's: its open requests.
    this.local = new RateLimiter({ maxConcurrent: settings.maxConcurrent });
    this.key = rateBucketKey(createHash('sha256').update(rateLimiterKey(identity)).digest('hex').slice(0, 32));
    this.windowMs = options.windowMs ?? minuteMs;
  }

  async acquire(estimatedTokens: number, signal?: AbortSignal, onWait?: (notice: RateWaitNotice) => void): Promise<RateLimitPermit> {
    const permit = await this.local.acquire(0, signal, onWait);
    const { requestsPerMinute, tokensPerMinute } = this.settings;
    let waited = 0;
    let longest: RateWaitNotice['limit'] = 'requests_per_minute';
    try {
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        const [waitMs, limit] = await this.redis.eval(takeScript, 1, this.key, this.windowMs, requestsPerMinute ?? 0, tokensPerMinute ?? 0, estimatedTokens) as [number, string];
        if (waitMs <= 0) break;
        longest = limit as RateWaitNotice['limit'];
        await abortableSleep(waitMs, signal);
        waited += waitMs;
      }
    } catch (error) {
      permit.release();
      throw error;
    }
    if (waited > 0) onWait?.({ waitMs: Math.round(waited), limit: longest });
    return {
      settle: (tokens) => {
        if (tokensPerMinute !== undefined) void this.redis.eval(settleScript, 1, this.key, tokens - estimatedTokens).catch(() => undefined);
        permit.settle(tokens);
      },
      release: () => permit.release(),
    };
  }

  slowDown(retryAfterMs: number): void {
    this.local.slowDown(retryAfterMs);
    void this.redis.eval(pauseScript, 1, this.key, Math.max(0, Math.round(retryAfterMs)), this.windowMs).catch(() => undefined);
  }
}
