/**
 * Token counts of model requests, and how they add up. Cached prompt tokens are the part of the
 * prompt the provider served from its cache: counted inside `promptTokens`, charged at less.
 */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** How many of `promptTokens` were read from the provider's prompt cache. */
  cachedPromptTokens?: number;
  /** How many of `promptTokens` were written to the cache (charged above input by providers with explicit caching). */
  cacheWritePromptTokens?: number;
}

/** Money a model's tokens cost, in US dollars per million tokens. */
export interface TokenPrices {
  inputPerMillion: number;
  outputPerMillion: number;
  /** Prompt tokens served from the provider's cache; charged as other input when not given. */
  cachedInputPerMillion?: number;
  /** Prompt tokens written to the cache; charged as other input when not given. */
  cacheWriteInputPerMillion?: number;
}

/**
 * The prices of the profiles a run's model may answer from: its own (no name) and its fallbacks.
 * Undefined for a model with an unknown price.
 */
export interface PriceBook {
  pricesFor(profile?: string): Promise<TokenPrices | undefined>;
}

export function zeroUsage(): TokenUsage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
}

export function addUsage(left: TokenUsage, right: TokenUsage): TokenUsage {
  const cached = (left.cachedPromptTokens ?? 0) + (right.cachedPromptTokens ?? 0);
  const written = (left.cacheWritePromptTokens ?? 0) + (right.cacheWritePromptTokens ?? 0);
  return {
    promptTokens: left.promptTokens + right.promptTokens,
    completionTokens: left.completionTokens + right.completionTokens,
    totalTokens: left.totalTokens + right.totalTokens,
    ...(cached > 0 ? { cachedPromptTokens: cached } : {}),
    ...(written > 0 ? { cacheWritePromptTokens: written } : {}),
  };
}

/** The share of prompt tokens served from the cache, from 0 to 1; undefined before any prompt. */
export function cacheHitRate(usage: TokenUsage): number | undefined {
  if (usage.promptTokens <= 0) return undefined;
  return Math.min(1, (usage.cachedPromptTokens ?? 0) / usage.promptTokens);
}

interface RawUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  /** OpenAI, Azure, and most gateways. */
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  /** DeepSeek. */
  prompt_cache_hit_tokens?: number;
  /** Anthropic's fields, passed through by Anthropic-compatible gateways. */
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/**
 * Reads a provider's usage object. Each provider names its cached prompt tokens differently, and a
 * gateway may send more than one name (one of them 0), so the largest count is taken. All of them
 * count those tokens inside `prompt_tokens`, so the counts are capped at it.
 */
export function usageFromProvider(raw: RawUsage | null | undefined): TokenUsage | undefined {
  if (!raw) return undefined;
  const promptTokens = raw.prompt_tokens ?? 0;
  const completionTokens = raw.completion_tokens ?? 0;
  const cached = Math.max(0, raw.prompt_tokens_details?.cached_tokens ?? 0, raw.prompt_cache_hit_tokens ?? 0, raw.cache_read_input_tokens ?? 0);
  const cachedPromptTokens = Math.min(cached, promptTokens);
  const cacheWritePromptTokens = Math.min(Math.max(0, raw.cache_creation_input_tokens ?? 0), promptTokens - cachedPromptTokens);
  return {
    promptTokens,
    completionTokens,
    totalTokens: raw.total_tokens ?? promptTokens + completionTokens,
    ...(cachedPromptTokens > 0 ? { cachedPromptTokens } : {}),
    ...(cacheWritePromptTokens > 0 ? { cacheWritePromptTokens } : {}),
  };
}

/** "62% of prompt tokens cached", or undefined when nothing was served from a cache. */
export function describeCacheHits(usage: TokenUsage): string | undefined {
  const rate = cacheHitRate(usage);
  if (rate === undefined || (usage.cachedPromptTokens ?? 0) === 0) return undefined;
  return `${Math.round(rate * 100)}% of prompt tokens cached`;
}
