/**
 * One chat completion through the `openai` SDK, with the runtime's own retry policy (the SDK's is
 * turned off so every attempt is visible in the trace) and streaming assembled into one reply.
 */
import type { ChatCompletionChunk, ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import type OpenAI from 'openai';
import { profileDefaults } from '../../config/defaults.js';
import { ProviderError } from '../../contract/errors.js';
import { httpFetch } from './http-fetch.js';
import type { ModelConnection } from './model-connection.js';
import type { ChatModel, ModelReply, ModelRequest, RawToolCall, RetryNotice, TokenUsage } from '../../contract/model-types.js';
import { sharedRateLimiter, type RateWaitNotice, type RequestRateLimiter } from './rate-limiter.js';
import { classifyProviderFailure, retryDelay, type FailureClassification } from './retry-policy.js';
import { StreamWatchdog } from './stream-watchdog.js';
import { TokenCounter } from './token-counter.js';
import { abortableSleep } from './abortable-sleep.js';
import { withCacheMarkers } from './cache-markers.js';
import { lazyPrices, singlePriceBook, type PriceBook } from './pricing.js';
import { usageFromProvider } from '../../contract/token-usage.js';

export interface ModelClientOptions {
  onRetry?: (notice: RetryNotice) => void;
  /** Told how long a request waited for the profile's rate limit before it was sent. */
  onRateWait?: (notice: RateWaitNotice) => void;
  /** The limiter to share; by default the process's one for the profile, endpoint and model. */
  rateLimiter?: RequestRateLimiter;
  sleep?: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
}

let sdkModule: Promise<typeof import('openai')> | undefined;

function sdk(): Promise<typeof import('openai')> {
  sdkModule ??= import('openai');
  return sdkModule;
}

/**
 * Starts loading the SDK before any client exists: `manus run` calls it first, so the load
 * overlaps reading the configuration. A failure to load surfaces at the first request.
 */
export function preloadModelSdk(): void {
  sdk().catch(() => undefined);
}

export class ModelClient implements ChatModel {
  readonly connection: ModelConnection;
  private readonly options: ModelClientOptions;
  private sdkClient?: Promise<OpenAI>;
  private readonly rateLimiter?: RequestRateLimiter;
  private tokenCounter?: TokenCounter;
  readonly prices: PriceBook;

  constructor(connection: ModelConnection, options: ModelClientOptions = {}) {
    this.connection = connection;
    this.options = options;
    this.prices = singlePriceBook(lazyPrices(connection.profile.price, { model: connection.model, baseUrl: connection.baseUrl }));
    this.rateLimiter = options.rateLimiter
      ?? sharedRateLimiter({ profileName: connection.profile.name, baseUrl: connection.baseUrl, model: connection.model }, connection.profile.rateLimit);
  }

  /** Starts loading the SDK so the first request does not wait for it. */
  prepare(): void {
    void this.client();
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const started = performance.now();
    const settings = this.connection.profile.retry;
    for (let attempt = 1; ; attempt += 1) {
      const permit = await this.rateLimiter?.acquire(this.estimatedTokens(request), request.signal, this.options.onRateWait);
      try {
        const reply = await this.attempt(request);
        if (reply.usage) permit?.settle(reply.usage.totalTokens);
        permit?.release();
        return { ...reply, attempts: attempt, durationMs: performance.now() - started };
      } catch (error) {
        // The slot is free while the retry waits; only the window keeps counting the request.
        permit?.release();
        if (request.signal?.aborted) throw request.signal.reason ?? error;
        const classification = classifyProviderFailure(error);
        const delay = retryDelay(classification, attempt, settings);
        if (delay === undefined) throw this.finalError(classification, attempt, error);
        this.options.onRetry?.({ attempt, delayMs: delay, reason: `${classification.kind}: ${classification.detail}` });
        // A shared limiter makes every client, this one included, wait out the 429 before its next request.
        if (classification.kind === 'rate_limited' && this.rateLimiter) this.rateLimiter.slowDown(delay);
        else await (this.options.sleep ?? abortableSleep)(delay, request.signal);
      }
    }
  }

  /** What the request will cost before it is sent: its messages and tools, plus the reply it may get. */
  private estimatedTokens(request: ModelRequest): number {
    if (this.rateLimiter?.settings.tokensPerMinute === undefined) return 0;
    this.tokenCounter ??= new TokenCounter(this.connection.model);
    const tools = request.tools && request.tools.length > 0 ? this.tokenCounter.countText(JSON.stringify(request.tools)) : 0;
    return this.tokenCounter.countMessages(request.messages) + tools + (this.connection.profile.maxTokens ?? 0);
  }

  private client(): Promise<OpenAI> {
    this.sdkClient ??= sdk().then(({ default: OpenAIClient, AzureOpenAI }) => {
      const { connection } = this;
      const common = {
        apiKey: connection.apiKey,
        maxRetries: 0,
        timeout: connection.profile.timeoutSeconds * 1000,
        defaultHeaders: connection.headers,
        fetch: httpFetch,
      };
      if (connection.provider === 'azure') {
        return new AzureOpenAI({
          ...common,
          endpoint: connection.baseUrl,
          apiVersion: connection.profile.apiVersion ?? profileDefaults.api_version,
          deployment: connection.profile.deployment ?? connection.model,
        });
      }
      return new OpenAIClient({ ...common, baseURL: connection.baseUrl });
    });
    return this.sdkClient;
  }

  private requestBody(request: ModelRequest): ChatCompletionCreateParams {
    const { connection } = this;
    const { profile } = connection;
    const messages = profile.cache === 'explicit' ? withCacheMarkers(request.messages, request.stableMessages ?? request.messages.length) : request.messages;
    const body: Record<string, unknown> = { model: connection.model, messages };
    if (request.tools && request.tools.length > 0) {
      body.tools = request.tools;
      body.tool_choice = request.toolChoice ?? 'auto';
      if (request.parallelToolCalls === false) body.parallel_tool_calls = false;
    }
    if (connection.reasoning) {
      if (profile.maxTokens) body.max_completion_tokens = profile.maxTokens;
      if (profile.reasoningEffort) body.reasoning_effort = profile.reasoningEffort;
    } else {
      if (profile.maxTokens) body.max_tokens = profile.maxTokens;
      if (profile.temperature !== undefined) body.temperature = profile.temperature;
    }
    if (request.responseSchema) {
      body.response_format = { type: 'json_schema', json_schema: { name: 'answer', schema: request.responseSchema } };
    }
    return body as unknown as ChatCompletionCreateParams;
  }

  private async attempt(request: ModelRequest): Promise<Omit<ModelReply, 'attempts' | 'durationMs'>> {
    const client = await this.client();
    const body = this.requestBody(request);
    const streaming: boolean = this.connection.profile.stream ?? request.onTextDelta !== undefined;
    if (streaming) return this.streamedAttempt(client, body, request);
    const completion = await client.chat.completions.create({ ...body, stream: false }, { signal: request.signal });
    const choice = completion.choices?.[0];
    if (!choice) throw new ProviderError('malformed_reply', 'the provider replied with no choices');
    const message = choice.message as typeof choice.message & { reasoning_content?: string; reasoning?: string };
    const content = message.content ?? null;
    if (content && request.onTextDelta) request.onTextDelta(content);
    return {
      content,
      toolCalls: (message.tool_calls ?? [])
        .filter((call) => call.type === 'function')
        .map((call, index) => ({ id: call.id || `call_${index}`, name: call.function.name, arguments: call.function.arguments ?? '' })),
      reasoning: message.reasoning_content ?? message.reasoning,
      finishReason: choice.finish_reason ?? null,
      usage: usageFromProvider(completion.usage),
      model: completion.model ?? this.connection.model,
    };
  }

  /**
   * A streamed reply must finish within the request timeout and never go quiet for longer than the
   * idle timeout. A reply that stalls is abandoned whole: what it streamed so far, a half tool call
   * included, is never returned, and the attempt fails as a retryable timeout.
   */
  private async streamedAttempt(client: OpenAI, body: ChatCompletionCreateParams, request: ModelRequest): Promise<Omit<ModelReply, 'attempts' | 'durationMs'>> {
    const { profile } = this.connection;
    const watchdog = new StreamWatchdog({
      totalMs: profile.timeoutSeconds * 1000,
      idleMs: (profile.streamIdleTimeoutSeconds ?? profileDefaults.stream_idle_timeout_seconds) * 1000,
    }, request.signal);
    try {
      const stream = await client.chat.completions.create(
        { ...body, stream: true, stream_options: { include_usage: true } },
        { signal: watchdog.signal },
      );
      watchdog.touch();
      const reply = await assembleStream(stream, request.onTextDelta, this.connection.model, () => watchdog.touch());
      // The SDK ends an aborted stream quietly, as if it had finished: what it gave is partial.
      if (watchdog.signal.aborted) throw watchdog.failure ?? request.signal?.reason;
      return reply;
    } catch (error) {
      throw watchdog.failure ?? error;
    } finally {
      watchdog.stop();
    }
  }

  private finalError(classification: FailureClassification, attempts: number, cause: unknown): ProviderError {
    const { connection } = this;
    const where = connection.baseUrl;
    const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
    const messages: Record<string, string> = {
      authentication: `${where} rejected the API key (401)${connection.apiKeyEnv ? ` from ${connection.apiKeyEnv}` : ''}: ${classification.detail}. Check that ${connection.apiKeyEnv ?? 'OPENAI_API_KEY'} holds a valid key for this endpoint.`,
      permission: `${where} refused access (403): ${classification.detail}. The key may lack access to model '${connection.model}'.`,
      not_found: `${where} does not know model '${connection.model}' or the endpoint (404): ${classification.detail}. Check MANUS_MODEL or the profile's model and base_url.`,
      bad_request: `${where} refused the request (${classification.status}): ${classification.detail}`,
      context_too_long: `the conversation is longer than model '${connection.model}' accepts: ${classification.detail}`,
      rate_limited: `${where} kept rate-limiting the requests${tries}: ${classification.detail}`,
      quota_exceeded: `${where} refused the request because the account is out of quota or credit (${classification.status}): ${classification.detail}. Add credit or raise the account's spending limit, or use another key or profile.`,
      server_error: `${where} failed with a server error${tries}: ${classification.detail}`,
      unreachable: `cannot reach ${where}${tries}: ${classification.detail}. Is the server running, and is OPENAI_BASE_URL or the profile's base_url right?`,
      timeout: `${where} did not answer in time${tries}: ${classification.detail}`,
      malformed_reply: `${where} sent replies that could not be used${tries}: ${classification.detail}`,
    };
    return new ProviderError(classification.kind, messages[classification.kind] ?? classification.detail, {
      status: classification.status,
      cause,
    });
  }
}

async function assembleStream(
  stream: AsyncIterable<ChatCompletionChunk>,
  onTextDelta: ((text: string) => void) | undefined,
  requestedModel: string,
  onChunk: () => void,
): Promise<Omit<ModelReply, 'attempts' | 'durationMs'>> {
  let content = '';
  let reasoning = '';
  let finishReason: string | null = null;
  let usage: TokenUsage | undefined;
  let model = requestedModel;
  let sawChoice = false;
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for await (const chunk of stream) {
    onChunk();
    if (chunk.usage) usage = usageFromProvider(chunk.usage);
    if (chunk.model) model = chunk.model;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    sawChoice = true;
    const delta = choice.delta as typeof choice.delta & { reasoning_content?: string; reasoning?: string };
    if (delta?.content) {
      content += delta.content;
      onTextDelta?.(delta.content);
    }
    const thinking = delta?.reasoning_content ?? delta?.reasoning;
    if (thinking) reasoning += thinking;
    for (const part of delta?.tool_calls ?? []) {
      const index = part.index ?? calls.length;
      calls[index] ??= { id: '', name: '', arguments: '' };
      if (part.id) calls[index].id = part.id;
      if (part.function?.name) calls[index].name += part.function.name;
      if (part.function?.arguments) calls[index].arguments += part.function.arguments;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  if (!sawChoice) throw new ProviderError('malformed_reply', 'the provider streamed no choices');
  // A stream that ends with no finish reason was cut short; its last tool call may be half sent.
  if (finishReason === null && calls.length > 0) {
    throw new ProviderError('malformed_reply', 'the reply stream ended before the reply was complete (no finish reason)');
  }
  const toolCalls: RawToolCall[] = calls
    .filter((call) => call !== undefined)
    .map((call, index) => ({ ...call, id: call.id || `call_${index}` }));
  return { content: content === '' && toolCalls.length > 0 ? null : content, toolCalls, reasoning: reasoning || undefined, finishReason, usage, model };
}
