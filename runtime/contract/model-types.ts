import type { ChatMessage, JsonSchema } from './tool.js';

export interface ToolSpecification {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}

export interface ModelRequest {
  messages: ChatMessage[];
  tools?: ToolSpecification[];
  toolChoice?: 'auto' | 'required' | 'none';
  parallelToolCalls?: boolean;
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

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ModelReply {
  content: string | null;
  toolCalls: RawToolCall[];
  reasoning?: string;
  finishReason: string | null;
  usage?: TokenUsage;
  model: string;
  attempts: number;
  durationMs: number;
}

/** Anything that answers chat requests: the provider client, or recorded replies during a replay. */
export interface ChatModel {
  complete(request: ModelRequest): Promise<ModelReply>;
}

export interface RetryNotice {
  attempt: number;
  delayMs: number;
  reason: string;
}
