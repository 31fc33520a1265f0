/**
 * A flow's budgets, shared by all its steps, those running at once included: each step's loop
 * reports what it spends and stops when the flow's budget is gone. A step's own budget is its
 * limits within what the flow has left when it starts.
 */
import type { BudgetName, SharedBudget } from '../../kernel/agent-loop.js';
import type { RunBudgets } from '../../config/run-plan.js';
import type { StepBudgets } from '../../contract/step-kind.js';
import { addUsage, zeroUsage, type TokenUsage } from '../../contract/token-usage.js';

export interface FlowSpending {
  steps: number;
  usage: TokenUsage;
  cost: number;
}

/** What a flow had spent when it stopped: in all, and by the path of the agent that spent it. */
export interface EarlierSpending {
  spent: FlowSpending;
  spentByPath: ReadonlyMap<string, FlowSpending>;
}

export class FlowBudget implements SharedBudget {
  readonly spent: FlowSpending;
  /** By agent path, so that a step's spending is its own even while other steps run at once. */
  private readonly byPath = new Map<string, FlowSpending>();
  private readonly deadline: number | undefined;

  /** `outer` is a budget the whole run shares with others (a batch's), told of every spending too. */
  constructor(private readonly limits: RunBudgets, earlier?: EarlierSpending, private readonly outer?: SharedBudget) {
    this.spent = earlier ? copySpending(earlier.spent) : zeroSpending();
    for (const [path, spent] of earlier?.spentByPath ?? []) this.byPath.set(path, copySpending(spent));
    this.deadline = limits.timeSeconds === undefined ? undefined : Date.now() + limits.timeSeconds * 1000;
  }

  spend(spent: { steps?: number; usage?: TokenUsage; cost?: number }): void {
    addSpending(this.spent, spent);
    this.outer?.spend(spent);
  }

  /** The flow's budget as one agent sees it: what it spends counts for the flow and for its path. */
  at(path: string): SharedBudget {
    return {
      spend: (spent) => {
        this.spend(spent);
        const own = this.byPath.get(path) ?? zeroSpending();
        this.byPath.set(path, own);
        addSpending(own, spent);
      },
      exhausted: () => this.exhausted(),
    };
  }

  /** What the agents at `path` and below it spent, before a resume included. */
  spentWithin(path: string): FlowSpending {
    const total = zeroSpending();
    for (const [agentPath, spent] of this.byPath) {
      if (agentPath === path || agentPath.startsWith(`${path}/`)) addSpending(total, spent);
    }
    return total;
  }

  exhausted(): BudgetName | undefined {
    const { limits, spent } = this;
    const outer = this.outer?.exhausted();
    if (outer) return outer;
    if (spent.steps >= limits.steps) return 'steps';
    if (limits.tokens !== undefined && spent.usage.totalTokens >= limits.tokens) return 'tokens';
    if (limits.cost !== undefined && spent.cost >= limits.cost) return 'cost';
    if (this.deadline !== undefined && Date.now() >= this.deadline) return 'time';
    return undefined;
  }

  /** The limits of a step that starts now: its own (the agent's max_steps by default), within the flow's remainder. */
  forStep(own: StepBudgets, agentMaxSteps: number): RunBudgets {
    const { limits, spent } = this;
    return {
      steps: Math.max(0, Math.min(own.steps ?? agentMaxSteps, limits.steps - spent.steps)),
      tokens: smaller(own.tokens, limits.tokens === undefined ? undefined : Math.max(0, limits.tokens - spent.usage.totalTokens)),
      cost: smaller(own.cost, limits.cost === undefined ? undefined : Math.max(0, limits.cost - spent.cost)),
      timeSeconds: smaller(own.timeSeconds, this.deadline === undefined ? undefined : Math.max(0.001, (this.deadline - Date.now()) / 1000)),
    };
  }
}

/** Step budgets within a parent's: the smaller of each. */
export function withinBudgets(own: StepBudgets, parent: StepBudgets): StepBudgets {
  return {
    steps: smaller(own.steps, parent.steps),
    tokens: smaller(own.tokens, parent.tokens),
    cost: smaller(own.cost, parent.cost),
    timeSeconds: smaller(own.timeSeconds, parent.timeSeconds),
  };
}

function smaller(first: number | undefined, second: number | undefined): number | undefined {
  if (first === undefined) return second;
  if (second === undefined) return first;
  return Math.min(first, second);
}

function zeroSpending(): FlowSpending {
  return { steps: 0, usage: zeroUsage(), cost: 0 };
}

function copySpending(spent: FlowSpending): FlowSpending {
  return { steps: spent.steps, usage: { ...spent.usage }, cost: spent.cost };
}

function addSpending(total: FlowSpending, spent: { steps?: number; usage?: TokenUsage; cost?: number }): void {
  total.steps += spent.steps ?? 0;
  if (spent.usage) total.usage = addUsage(total.usage, spent.usage);
  total.cost += spent.cost ?? 0;
}

