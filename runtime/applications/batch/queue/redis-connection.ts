/**
 * The queue's Redis, from the user's URL (`redis://[user:password@]HOST:PORT/DB`, or `rediss://`
 * for TLS) and REDIS_PASSWORD. Whoever can write to the queue can make workers run recipes and
 * plugins, so a Redis on another machine must ask for a password or speak TLS: without either,
 * only a loopback address is accepted. The password is never shown or recorded.
 */
import { isIP } from 'node:net';
import type { RedisOptions } from 'bullmq';
import { UsageError } from '../../../contract/errors.js';

export interface QueueConnection {
  /** What ioredis and BullMQ connect with. */
  options: RedisOptions;
  /** The URL without its password, for messages and the batch record. */
  display: string;
  host: string;
}

export function parseQueueUrl(text: string, environment: Record<string, string | undefined>): QueueConnection {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--queue ${displayQueueUrl(text)}: not a URL; expected redis://HOST:PORT/DB or rediss://HOST:PORT/DB`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new UsageError(`--queue ${displayQueueUrl(text)}: the queue is a Redis, redis:// or rediss:// (TLS)`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new UsageError(`--queue ${displayQueueUrl(text)}: the URL names no host`);
  const port = url.port === '' ? 6379 : Number(url.port);
  const databaseText = url.pathname.replace(/^\//, '');
  const database = databaseText === '' ? 0 : Number(databaseText);
  if (!Number.isInteger(database) || database < 0) throw new UsageError(`--queue ${displayQueueUrl(text)}: the database must be a number, as in redis://HOST:6379/0`);
  const password = url.password !== '' ? decodeURIComponent(url.password) : environment.REDIS_PASSWORD || undefined;
  const username = url.username !== '' ? decodeURIComponent(url.username) : undefined;
  const tls = url.protocol === 'rediss:';
  if (!tls && password === undefined && !isLoopback(host)) {
    throw new UsageError(
      `--queue ${displayQueueUrl(text)}: a Redis on another machine needs a password (in the URL or REDIS_PASSWORD) or TLS (rediss://); ` +
      'whoever can write to the queue can make workers run recipes and plugins, so an open one is refused',
    );
  }
  return {
    options: {
      host,
      port,
      db: database,
      ...(username ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(tls ? { tls: { servername: isIP(host) ? undefined : host } } : {}),
      // Commands wait for a Redis that went away instead of failing: the batch pauses until it is back.
      maxRetriesPerRequest: null,
      retryStrategy: (times: number) => Math.min(250 * times, 2000),
      lazyConnect: false,
    },
    display: displayQueueUrl(text),
    host,
  };
}

/** The URL as it may be shown: without a password. */
export function displayQueueUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return text.replace(/\/\/[^@/]*@/, '//***@');
  }
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
