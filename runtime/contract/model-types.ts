import type { ChatMessage, JsonSchema } from './tool.js';
import type { PriceBook, TokenUsage } from './token-usage.js';

export type { TokenUsage };

export interface ToolSpecification {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}

export interface ModelRequest {
  messages: ChatMessage[];
  tools?: ToolSpecification[];
  toolChoice?: 'auto' | 'required' | 'none';
  parallelToolCalls?: boolean;
  /** How many leading messages are the stored conversation, the same in the next request; the rest are this step's. */
  stableMessages?: number;
  /** Sent again after the conversation was compacted because it was too long. */
  compacted?: boolean;
  /** Ask for a JSON reply matching this schema (used by tools that extract structured data). */
  responseSchema?: JsonSchema;
  signal?: AbortSignal;
  onTextDelta?: (text: string) => void;
}

export interface RawToolCall {
  id: string;
  name: string;
  /** The arguments exactly as the model sent them; may be malformed JSON. */
  arguments: string;
}


export interface ModelReply {
  content: string | null;
  toolCalls: RawToolCall[];
  reasoning?: string;
  finishReason: string | null;
  usage?: TokenUsage;
  model: string;
  /** The fallback profile that answered, when it was not the run's own. */
  profile?: string;
  /** What the reply cost, when that is known already (a recorded reply); otherwise the loop prices it. */
  cost?: number;
  attempts: number;
  durationMs: number;
}

/** Anything that answers chat requests: the provider client, or recorded replies during a replay. */
export interface ChatModel {
  complete(request: ModelRequest): Promise<ModelReply>;
  /** The prices of the models that answer, when this model knows its endpoints. */
  readonly prices?: PriceBook;
  /** Whether a failure may be answered by another profile (a fallback chain), so it is worth sending again. */
  readonly hasFallbacks?: boolean;
}

export interface RetryNotice {
  attempt: number;
  delayMs: number;
  reason: string;
}
