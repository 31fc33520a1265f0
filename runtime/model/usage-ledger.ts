/**
 * Tokens spent for a run outside the loop's own model requests (an MCP server's sampling). The
 * loop takes what has gathered at each step, so it counts in the run's usage and budgets.
 */
import { addUsage, zeroUsage, type TokenUsage } from './token-usage.js';

export class UsageLedger {
  private pending: TokenUsage | undefined;

  add(usage: TokenUsage): void {
    this.pending = addUsage(this.pending ?? zeroUsage(), usage);
  }

  take(): TokenUsage | undefined {
    const taken = this.pending;
    this.pending = undefined;
    return taken;
  }
}
