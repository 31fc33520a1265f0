/**
 * Money spent on tokens, in US dollars. A profile's own `price:` wins; otherwise the model is
 * looked up in a maintained price table, loaded only once a cost is wanted. A model neither knows
 * has an unknown cost: undefined, never 0.
 */
import type { PriceBook, TokenPrices, TokenUsage } from '../../contract/token-usage.js';
import type { PricedModel } from './price-table.js';

export type { PriceBook, TokenPrices };

export function costOf(usage: TokenUsage, prices: TokenPrices): number {
  const cached = usage.cachedPromptTokens ?? 0;
  const written = usage.cacheWritePromptTokens ?? 0;
  const plain = usage.promptTokens - cached - written;
  return (
    plain * prices.inputPerMillion +
    cached * (prices.cachedInputPerMillion ?? prices.inputPerMillion) +
    written * (prices.cacheWriteInputPerMillion ?? prices.inputPerMillion) +
    usage.completionTokens * prices.outputPerMillion
  ) / 1_000_000;
}



/** The profile's prices when it has them, else the table's for the model, looked up once and only when asked. */
export function lazyPrices(profilePrices: TokenPrices | undefined, model: PricedModel): () => Promise<TokenPrices | undefined> {
  if (profilePrices) {
    const known = Promise.resolve(profilePrices);
    return () => known;
  }
  let lookup: Promise<TokenPrices | undefined> | undefined;
  return () => (lookup ??= import('./price-cache.js').then(({ cachedTablePrices }) => cachedTablePrices(model)));
}

/** A book of one profile's prices. */
export function singlePriceBook(prices: () => Promise<TokenPrices | undefined>): PriceBook {
  return { pricesFor: () => prices() };
}

interface PricedProfile {
  name: string;
  price?: TokenPrices;
  model?: string;
  baseUrl?: string;
  fallbackProfiles?: PricedProfile[];
}

/**
 * The prices of a profile whose endpoint is not connected (a replay, which keeps the profile each
 * reply came from): its own or its fallbacks', each from `price:` or the table's for its model.
 */
export function profilePriceBook(profile: PricedProfile): PriceBook {
  const books = new Map<string, () => Promise<TokenPrices | undefined>>();
  const pricesOf = (each: PricedProfile) => {
    let prices = books.get(each.name);
    if (!prices) books.set(each.name, (prices = lazyPrices(each.price, { model: each.model ?? '', baseUrl: each.baseUrl })));
    return prices();
  };
  return {
    pricesFor: async (name) => {
      const each = name === undefined ? profile : profile.fallbackProfiles?.find((fallback) => fallback.name === name);
      return each ? pricesOf(each) : undefined;
    },
  };
}
