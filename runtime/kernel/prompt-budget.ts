/**
 * A request is sent only when its prompt alone fits in what the token and cost budgets have left,
 * so a run stops before the request that would overspend, not one step after it. The prompt is
 * counted locally; providers count a little more (the tool schemas, their own framing), so the gap
 * between their count of the last prompt and ours is added to the next one.
 */
import type { RunBudgets } from '../config/run-plan.js';
import type { TokenPrices } from '../services/model/pricing.js';

export type PromptBudgetName = 'tokens' | 'cost';

export class PromptBudget {
  private readonly budgets: RunBudgets;
  /** How many tokens the provider counted above our count of the last prompt. */
  private gap = 0;

  constructor(budgets: RunBudgets) {
    this.budgets = budgets;
  }

  /** Whether a prompt needs counting before it is sent. */
  get limited(): boolean {
    return this.budgets.tokens !== undefined || this.budgets.cost !== undefined;
  }

  /** The budget a prompt of `countedTokens` would pass on its own, given what is spent already. */
  exceededBy(countedTokens: number, spent: { tokens: number; cost: number }, prices: TokenPrices | undefined): PromptBudgetName | undefined {
    const promptTokens = countedTokens + this.gap;
    if (this.budgets.tokens !== undefined && spent.tokens + promptTokens > this.budgets.tokens) return 'tokens';
    if (this.budgets.cost !== undefined && prices && spent.cost + (promptTokens * prices.inputPerMillion) / 1_000_000 > this.budgets.cost) {
      return 'cost';
    }
    return undefined;
  }

  /** Learns from the provider's count of a prompt we counted. */
  calibrate(countedTokens: number, reportedTokens: number | undefined): void {
    if (reportedTokens !== undefined) this.gap = Math.max(0, reportedTokens - countedTokens);
  }
}
