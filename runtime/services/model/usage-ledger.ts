/**
 * Tokens spent for a run outside the loop's own model requests (an MCP server's sampling). The
 * loop takes what has gathered at each step, so it counts in the run's usage and budgets.
 */
import type { TokenUsage } from '../../contract/model-types.js';

export class UsageLedger {
  private pending: TokenUsage | undefined;

  add(usage: TokenUsage): void {
    const current = this.pending ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    this.pending = {
      promptTokens: current.promptTokens + usage.promptTokens,
      completionTokens: current.completionTokens + usage.completionTokens,
      totalTokens: current.totalTokens + usage.totalTokens,
    };
  }

  take(): TokenUsage | undefined {
    const taken = this.pending;
    this.pending = undefined;
    return taken;
  }
}
