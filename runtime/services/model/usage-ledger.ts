/**
 * What was spent for a loop outside its own model requests: tokens an MCP server's sampling asked
 * of the run's model, and what agents called as tools spent. The loop takes what has gathered at
 * each step, so it counts in the run's usage, cost and budgets.
 */
import { addUsage, zeroUsage, type TokenUsage } from '../../contract/token-usage.js';

export interface OutsideSpending {
  usage: TokenUsage;
  /** The part of `usage` the taker prices itself: its own model's tokens, asked for by an MCP server. */
  unpriced: TokenUsage;
  /** What the rest cost, as the loops that spent it priced it. */
  cost: number;
  /** Whether some of the rest came from a model whose price is unknown. */
  unknownCost: boolean;
}

export class UsageLedger {
  private pending: OutsideSpending | undefined;

  /** `cost`: what it cost, when the spender priced it; null when its price is unknown; left out to have the taker price it. */
  add(usage: TokenUsage, cost?: number | null): void {
    this.pending = combineSpending(this.pending, {
      usage,
      unpriced: cost === undefined ? usage : zeroUsage(),
      cost: cost ?? 0,
      unknownCost: cost === null,
    });
  }

  take(): OutsideSpending | undefined {
    const taken = this.pending;
    this.pending = undefined;
    return taken;
  }
}

export function combineSpending(first: OutsideSpending | undefined, second: OutsideSpending | undefined): OutsideSpending | undefined {
  if (!first) return second;
  if (!second) return first;
  return {
    usage: addUsage(first.usage, second.usage),
    unpriced: addUsage(first.unpriced, second.unpriced),
    cost: first.cost + second.cost,
    unknownCost: first.unknownCost || second.unknownCost,
  };
}
