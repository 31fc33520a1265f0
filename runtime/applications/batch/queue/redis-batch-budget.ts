/**
 * A queued batch's budget as each worker sees it: what every item spends is added to totals kept
 * in Redis, and the worker's loops stop as budget-exhausted once the totals pass the batch's
 * limits or its deadline. The batch's stop key (set when the batch is interrupted or its budget
 * runs out) is read every moment, so a worker starts nothing more of a stopped batch.
 */
import type { Redis } from 'ioredis';
import type { BudgetName, SharedBudget } from '../../../kernel/agent-loop.js';
import type { TokenUsage } from '../../../contract/model-types.js';
import { batchSpentKey, batchStopKey, type ItemJobData } from './queue-protocol.js';

const stopPollMs = 500;

export class RedisBatchBudget implements SharedBudget {
  private tokens = 0;
  private cost = 0;
  private stopReason: string | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly stopListeners = new Set<(reason: string) => void>();

  constructor(private readonly redis: Redis, private readonly batchId: string, private readonly limits: ItemJobData['batchBudget']) {
    this.timer = setInterval(() => void this.poll(), stopPollMs);
    this.timer.unref();
    void this.poll();
  }

  /** The reason the batch was stopped, if it was: `interrupted` or `budget-exhausted`. */
  get stopped(): string | undefined {
    return this.stopReason;
  }

  onStop(listener: (reason: string) => void): () => void {
    this.stopListeners.add(listener);
    if (this.stopReason) listener(this.stopReason);
    return () => this.stopListeners.delete(listener);
  }

  async refresh(): Promise<void> {
    await this.poll();
  }

  spend(spent: { steps?: number; usage?: TokenUsage; cost?: number }): void {
    const tokens = spent.usage?.totalTokens ?? 0;
    const cost = spent.cost ?? 0;
    // Without a token or cost budget there is nothing to add up across workers.
    if ((tokens === 0 && cost === 0) || (this.limits.tokens === undefined && this.limits.cost === undefined)) return;
    this.tokens += tokens;
    this.cost += cost;
    const key = batchSpentKey(this.batchId);
    void this.redis.multi().hincrby(key, 'tokens', tokens).hincrbyfloat(key, 'cost', cost).exec().then((replies) => {
      const [tokenReply, costReply] = replies ?? [];
      if (tokenReply && !tokenReply[0]) this.tokens = Math.max(this.tokens, Number(tokenReply[1]));
      if (costReply && !costReply[0]) this.cost = Math.max(this.cost, Number(costReply[1]));
    }, () => undefined);
  }

  exhausted(): BudgetName | undefined {
    const { limits } = this;
    if (limits.tokens !== undefined && this.tokens >= limits.tokens) return 'tokens';
    if (limits.cost !== undefined && this.cost >= limits.cost) return 'cost';
    if (limits.deadline !== undefined && Date.now() >= limits.deadline) return 'time';
    return undefined;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    try {
      const [stop, spent] = await Promise.all([this.redis.get(batchStopKey(this.batchId)), this.redis.hgetall(batchSpentKey(this.batchId))]);
      this.tokens = Math.max(this.tokens, Number(spent.tokens ?? 0));
      this.cost = Math.max(this.cost, Number(spent.cost ?? 0));
      if (stop && !this.stopReason) {
        this.stopReason = stop;
        for (const listener of this.stopListeners) listener(stop);
      }
    } catch {
      // Redis is away: the totals known so far hold until it is back.
    }
  }
}
