/**
 * Which provider failures are worth another attempt, and how long to wait. Rate limits honour
 * Retry-After up to a cap; server errors, dropped connections and stalled replies back off with
 * jitter; an exhausted quota and any other 4xx fail at once, because repeating a rejected request
 * only wastes time.
 */
import { ProviderError, type ProviderFailureKind } from '../../contract/errors.js';
import type { RetrySettings } from '../../config/types.js';

export interface FailureClassification {
  kind: ProviderFailureKind;
  retryable: boolean;
  status?: number;
  /** The server's requested wait, when it gave one. */
  retryAfterMs?: number;
  detail: string;
}

interface ErrorLike {
  message?: string;
  status?: number;
  code?: string;
  type?: string;
  headers?: { get(name: string): string | null | undefined };
  cause?: unknown;
}

export function classifyProviderFailure(error: unknown): FailureClassification {
  if (ProviderError.isInstance(error)) {
    return { kind: error.kind, retryable: error.kind === 'malformed_reply' || error.kind === 'timeout', status: error.status, detail: error.message };
  }
  const failure = (error ?? {}) as ErrorLike;
  const detail = providerDetail(failure);
  // The SDK's error classes keep their names; matching on them avoids loading the SDK here.
  const kind = (error as { constructor?: { name?: string } } | null)?.constructor?.name;
  if (kind === 'APIConnectionTimeoutError') return { kind: 'timeout', retryable: true, detail };
  if (failure.status === undefined) {
    if (kind === 'APIConnectionError' || isNetworkError(failure)) return { kind: 'unreachable', retryable: true, detail };
    return { kind: 'malformed_reply', retryable: true, detail };
  }
  const status = failure.status;
  // Checked before 429: an empty account answers 429 too, and no wait refills it.
  if (quotaStatuses.has(status) && isQuotaExhausted(failure, detail)) return { kind: 'quota_exceeded', retryable: false, status, detail };
  if (status === 429) return { kind: 'rate_limited', retryable: true, status, retryAfterMs: retryAfter(failure.headers), detail };
  if (status >= 500) return { kind: 'server_error', retryable: true, status, retryAfterMs: retryAfter(failure.headers), detail };
  if (status === 408) return { kind: 'timeout', retryable: true, status, detail };
  if (status === 401) return { kind: 'authentication', retryable: false, status, detail };
  if (status === 403) return { kind: 'permission', retryable: false, status, detail };
  if (status === 404) return { kind: 'not_found', retryable: false, status, detail };
  if (isContextTooLong(failure, detail)) return { kind: 'context_too_long', retryable: false, status, detail };
  return { kind: 'bad_request', retryable: false, status, detail };
}

/** Milliseconds to wait before attempt `attempt + 1`, or undefined when the policy gives up. */
export function retryDelay(classification: FailureClassification, attempt: number, settings: RetrySettings, random = Math.random): number | undefined {
  if (!classification.retryable || attempt >= settings.maxAttempts) return undefined;
  if (classification.retryAfterMs !== undefined) {
    const cap = settings.maxRetryAfterSeconds * 1000;
    if (classification.retryAfterMs > cap) return undefined;
    return Math.max(0, classification.retryAfterMs);
  }
  const exponential = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
  // Full jitter spreads retries from many clients; keep at least half the delay so a retry is never instant.
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

function retryAfter(headers: ErrorLike['headers']): number | undefined {
  if (!headers || typeof headers.get !== 'function') return undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds && Number.isFinite(Number(milliseconds))) return Number(milliseconds);
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function providerDetail(failure: ErrorLike): string {
  const message = failure.message ?? 'unknown error';
  const cause = failure.cause as { message?: string; code?: string } | undefined;
  const causeText = cause?.code ?? cause?.message;
  return causeText && !message.includes(causeText) ? `${message} (${causeText})` : message;
}

function isNetworkError(failure: ErrorLike): boolean {
  const code = failure.code ?? (failure.cause as { code?: string } | undefined)?.code;
  return typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EPIPE|UND_ERR)/.test(code);
}

function isContextTooLong(failure: ErrorLike, detail: string): boolean {
  return failure.code === 'context_length_exceeded' || /maximum context length|context length|too many tokens|context window/i.test(detail);
}

// 402 is how OpenRouter and others say it; OpenAI uses 429, and 400 for a billing hard limit.
const quotaStatuses = new Set([400, 402, 403, 429]);
const quotaCodes = new Set(['insufficient_quota', 'billing_hard_limit_reached', 'billing_not_active']);

/**
 * Out of credit or over a spending cap. Links are left out of the message test: OpenAI's ordinary
 * rate-limit message links to the billing page, and that one is worth waiting out.
 */
function isQuotaExhausted(failure: ErrorLike, detail: string): boolean {
  if (failure.status === 402) return true;
  if (quotaCodes.has(failure.code ?? '') || quotaCodes.has(failure.type ?? '')) return true;
  return /exceeded your current quota|insufficient[_ ]quota|\bbilling\b/i.test(detail.replace(/\S+:\/\/\S+/g, ''));
}
