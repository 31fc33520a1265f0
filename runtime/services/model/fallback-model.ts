/**
 * A chain of model profiles: the run's own first, then its `fallback:` profiles in order. After a
 * profile's own retries, the run moves on only for failures another provider may not share (an
 * exhausted quota, rate limits, server errors, timeouts, an endpoint that cannot be reached) and for
 * a conversation still too long once compacted, which goes to the first fallback with a larger
 * context window. A request's own fault (a 400) or a rejected key never moves it: another profile
 * would be sent the same thing, or be asked to cover a configuration error. After the cooldown the
 * chain tries its first profile again.
 */
import { ProviderError, type ProviderFailureKind } from '../../contract/errors.js';
import type { ChatModel, ModelReply, ModelRequest } from '../../contract/model-types.js';
import type { PriceBook, TokenPrices } from './pricing.js';

export interface ChainedProfile {
  name: string;
  contextWindow?: number;
  /** Connects on first use, so a fallback that is never needed is never set up. */
  model(): Promise<ChatModel>;
}

export interface ProfileSwitch {
  from: string;
  to: string;
  reason: string;
}

export interface FallbackOptions {
  cooldownMs: number;
  onSwitch(change: ProfileSwitch): void;
  now?: () => number;
}

const fallbackKinds: ReadonlySet<ProviderFailureKind> = new Set(['quota_exceeded', 'rate_limited', 'server_error', 'timeout', 'unreachable']);

export class FallbackModel implements ChatModel {
  private current = 0;
  private switchedAt = 0;
  private readonly models = new Map<number, Promise<ChatModel>>();
  readonly prices: PriceBook;

  constructor(private readonly chain: readonly ChainedProfile[], private readonly options: FallbackOptions) {
    this.prices = {
      pricesFor: async (profile?: string): Promise<TokenPrices | undefined> => {
        const index = profile === undefined ? 0 : this.chain.findIndex((each) => each.name === profile);
        if (index === -1) return undefined;
        const model = await this.modelAt(index);
        return model.prices?.pricesFor();
      },
    };
  }

  readonly hasFallbacks = true;

  async complete(request: ModelRequest): Promise<ModelReply> {
    this.returnAfterCooldown();
    // The failure that started the moves: a fallback that cannot even connect does not replace it.
    let cause: ProviderError | undefined;
    for (;;) {
      const index = this.current;
      let model: ChatModel;
      try {
        model = await this.modelAt(index);
      } catch (error) {
        if (!cause || !ProviderError.isInstance(error) || index + 1 >= this.chain.length) throw cause ?? error;
        this.switchTo(index + 1, `${this.chain[index].name} could not be connected: ${error.message}`);
        continue;
      }
      try {
        const reply = await model.complete(request);
        return index === 0 ? reply : { ...reply, profile: this.chain[index].name };
      } catch (error) {
        if (request.signal?.aborted || !ProviderError.isInstance(error)) throw error;
        const next = this.nextFor(error, request, index);
        if (next === undefined) throw error;
        cause = error;
        this.switchTo(next, `${error.kind}: ${error.message}`);
      }
    }
  }

  private nextFor(error: ProviderError, request: ModelRequest, index: number): number | undefined {
    if (fallbackKinds.has(error.kind)) return index + 1 < this.chain.length ? index + 1 : undefined;
    if (error.kind !== 'context_too_long' || !request.compacted) return undefined;
    const window = this.chain[index].contextWindow ?? 0;
    const larger = this.chain.findIndex((each, position) => position > index && (each.contextWindow ?? 0) > window);
    return larger === -1 ? undefined : larger;
  }

  private returnAfterCooldown(): void {
    if (this.current === 0) return;
    const now = this.options.now?.() ?? Date.now();
    if (now - this.switchedAt >= this.options.cooldownMs) this.switchTo(0, 'the cooldown ended');
  }

  private switchTo(index: number, reason: string): void {
    this.options.onSwitch({ from: this.chain[this.current].name, to: this.chain[index].name, reason });
    this.current = index;
    this.switchedAt = this.options.now?.() ?? Date.now();
  }

  private modelAt(index: number): Promise<ChatModel> {
    let model = this.models.get(index);
    if (!model) {
      model = this.chain[index].model();
      // A fallback that cannot be connected (a missing key) fails its turn and may be tried again later.
      model.catch(() => this.models.delete(index));
      this.models.set(index, model);
    }
    return model;
  }
}
