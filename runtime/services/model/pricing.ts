/** Money spent on tokens, from a profile's prices in US dollars per million tokens. */
import type { TokenUsage } from '../../contract/model-types.js';
import type { TokenPrices } from '../../config/types.js';

export type { TokenPrices } from '../../config/types.js';

export function costOf(usage: TokenUsage, prices: TokenPrices | undefined): number {
  if (!prices) return 0;
  return (usage.promptTokens * prices.inputPerMillion + usage.completionTokens * prices.outputPerMillion) / 1_000_000;
}
