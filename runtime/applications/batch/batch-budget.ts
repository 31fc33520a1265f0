/**
 * A batch's own budgets, totals over all its items: every item's loop reports what it spends and
 * stops as budget-exhausted once the total is gone, and no item starts after that. The time
 * budget also caps each item's own, so a long step stops when the batch's time is up.
 */
import type { BudgetName, SharedBudget } from '../../kernel/agent-loop.js';
import type { TokenUsage } from '../../contract/model-types.js';

export interface BatchBudgetLimits {
  tokens?: number;
  cost?: number;
  timeSeconds?: number;
}

export class BatchBudget implements SharedBudget {
  private tokens: number;
  private cost: number;
  private readonly deadline: number | undefined;
  private exhaustedName: BudgetName | undefined;
  private readonly listeners = new Set<(budget: BudgetName) => void>();

  constructor(private readonly limits: BatchBudgetLimits, earlier: { totalTokens: number; cost?: number } = { totalTokens: 0 }) {
    this.tokens = earlier.totalTokens;
    this.cost = earlier.cost ?? 0;
    this.deadline = limits.timeSeconds === undefined ? undefined : Date.now() + limits.timeSeconds * 1000;
    if (this.deadline !== undefined) setTimeout(() => this.exhausted(), Math.max(0, this.deadline - Date.now())).unref();
  }

  get limited(): boolean {
    return this.limits.tokens !== undefined || this.limits.cost !== undefined || this.limits.timeSeconds !== undefined;
  }

  spend(spent: { steps?: number; usage?: TokenUsage; cost?: number }): void {
    this.tokens += spent.usage?.totalTokens ?? 0;
    this.cost += spent.cost ?? 0;
    this.exhausted();
  }

  /** The budget that ran out, if one did; once one has, it stays out. */
  exhausted(): BudgetName | undefined {
    if (this.exhaustedName) return this.exhaustedName;
    const { limits } = this;
    const name: BudgetName | undefined = limits.tokens !== undefined && this.tokens >= limits.tokens ? 'tokens'
      : limits.cost !== undefined && this.cost >= limits.cost ? 'cost'
      : this.deadline !== undefined && Date.now() >= this.deadline ? 'time'
      : undefined;
    if (name) {
      this.exhaustedName = name;
      for (const listener of this.listeners) listener(name);
    }
    return name;
  }

  /** Called once, when a budget runs out. */
  onExhausted(listener: (budget: BudgetName) => void): void {
    this.listeners.add(listener);
  }

  /** The seconds left for an item starting now, when the batch has a time budget. */
  remainingSeconds(): number | undefined {
    return this.deadline === undefined ? undefined : Math.max(0.001, (this.deadline - Date.now()) / 1000);
  }
}
