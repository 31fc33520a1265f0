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
}

export function zeroUsage(): TokenUsage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
}

export function addUsage(left: TokenUsage, right: TokenUsage): TokenUsage {
  const cached = (left.cachedPromptTokens ?? 0) + (right.cachedPromptTokens ?? 0);
  return {
    promptTokens: left.promptTokens + right.promptTokens,
    completionTokens: left.completionTokens + right.completionTokens,
    totalTokens: left.totalTokens + right.totalTokens,
    ...(cached > 0 ? { cachedPromptTokens: cached } : {}),
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
  /** Anthropic's field, passed through by Anthropic-compatible gateways. */
  cache_read_input_tokens?: number;
}

/**
 * Reads a provider's usage object. Each provider names its cached prompt tokens differently; all
 * of them count those tokens inside `prompt_tokens`, so the cached count is capped at it.
 */
export function usageFromProvider(raw: RawUsage | null | undefined): TokenUsage | undefined {
  if (!raw) return undefined;
  const promptTokens = raw.prompt_tokens ?? 0;
  const completionTokens = raw.completion_tokens ?? 0;
  const cached = raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? raw.cache_read_input_tokens ?? 0;
  const cachedPromptTokens = Math.min(Math.max(0, cached), promptTokens);
  return {
    promptTokens,
    completionTokens,
    totalTokens: raw.total_tokens ?? promptTokens + completionTokens,
    ...(cachedPromptTokens > 0 ? { cachedPromptTokens } : {}),
  };
}

/** "62% of prompt tokens cached", or undefined when nothing was served from a cache. */
export function describeCacheHits(usage: TokenUsage): string | undefined {
  const rate = cacheHitRate(usage);
  if (rate === undefined || (usage.cachedPromptTokens ?? 0) === 0) return undefined;
  return `${Math.round(rate * 100)}% of prompt tokens cached`;
}
