/**
 * When a batch tries an item again: a provider failure (exit 4) a few times with a growing
 * backoff, since it is the provider's fault, not the item's; any other failure (a failed check or
 * task) only as often as the user's `--retries` says. Success, budgets, permissions, questions,
 * configuration errors and interrupts are never retried.
 */
import type { RunStatus } from '../../runs/run-status.js';

export interface ItemRetryPolicy {
  /** Further attempts after a provider failure. */
  providerRetries: number;
  /** Further attempts after any other failure (a failed check, a failed task). */
  retries: number;
  /** The first backoff; each later one doubles, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

const neverRetried: ReadonlySet<string> = new Set(['success', 'budget-exhausted', 'permission-denied', 'needs-input', 'interrupted']);
const configurationErrors: ReadonlySet<string> = new Set(['usage', 'config_invalid', 'plugin_invalid']);

export const defaultProviderRetries = 3;

export function itemRetryPolicy(retries: number, environment: Record<string, string | undefined> = {}): ItemRetryPolicy {
  const base = Number(environment.MANUS_BATCH_RETRY_DELAY_MS);
  return { providerRetries: Math.max(defaultProviderRetries, retries), retries, baseDelayMs: Number.isFinite(base) && base >= 0 ? base : 2000, maxDelayMs: 60_000 };
}

/** How long to wait before the next attempt, or undefined when the item is not tried again. */
export function retryDelayFor(policy: ItemRetryPolicy, ended: { status: RunStatus | string; error?: { code: string } }, attemptsMade: number): number | undefined {
  if (neverRetried.has(ended.status) || (ended.error && configurationErrors.has(ended.error.code))) return undefined;
  const allowed = ended.status === 'provider-failed' ? policy.providerRetries : policy.retries;
  if (attemptsMade > allowed) return undefined;
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attemptsMade - 1));
}
