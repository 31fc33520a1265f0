import { setMaxListeners } from 'node:events';
import { createWriteStream, readFileSync, realpathSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParams,
  ChatCompletionMessageFunctionToolCall,
} from 'openai/resources/chat/completions';
import { ExitCode } from '../../cli/exit-codes.js';
import { ManusError, errorMessage } from '../../runtime/contract/errors.js';

/**
 * An OpenAI-compatible chat completions server that answers from a script, so loop tests and the
 * benchmark can drive the real `openai` SDK client over real HTTP without a real model.
 */

export const scriptedModelName = 'scripted-model';

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** An object is sent JSON-encoded; a string is sent verbatim, so malformed JSON can be scripted. */
  arguments: unknown;
}

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Cached prompt tokens as OpenAI reports them. */
  prompt_tokens_details?: { cached_tokens: number };
  /** As DeepSeek reports them. */
  prompt_cache_hit_tokens?: number;
  /** As Anthropic-compatible gateways report them. */
  cache_read_input_tokens?: number;
}

export type ScriptedFault =
  | { kind: 'status'; status: number; retryAfter?: string; message?: string; type?: string; code?: string }
  | { kind: 'empty-choices' }
  | { kind: 'malformed-body' }
  | { kind: 'drop-connection' }
  /**
   * Sends the headers and the first half of the reply (streaming: the first chunk, with the turn's
   * first tool call and half its arguments), then nothing more until the client gives up.
   */
  | { kind: 'stall' };

export interface ScriptedTurn {
  content?: string;
  toolCalls?: ScriptedToolCall[];
  /** Sent as `reasoning_content`, the field DeepSeek, Qwen and vLLM use for reasoning text. */
  reasoning?: string;
  finishReason?: string;
  usage?: ScriptedUsage;
  /** Wait this long before replying, to script a slow model. */
  delayMs?: number;
  fault?: ScriptedFault;
  /** Checks the request; a throw becomes an HTTP 500 carrying the thrown message. */
  expect?: (request: RecordedChatRequest) => void;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Parsed JSON, or the raw text when it does not parse. */
  body: unknown;
  /** Epoch milliseconds (performance.timeOrigin + performance.now()) when the request arrived. */
  receivedAt: number;
  /** Epoch milliseconds when the last byte of the reply was written; unset if no reply was sent. */
  repliedAt?: number;
  /** The script position that answered, or null when no turn was consumed. */
  turnIndex: number | null;
}

export interface RecordedChatRequest extends RecordedRequest {
  body: ChatCompletionCreateParams;
}

export interface ExpectationFailure {
  /** Null for a side turn. */
  turnIndex: number | null;
  message: string;
}

export interface ScriptedModelServerOptions {
  turns: ScriptedTurn[];
  /** 'error' (default) answers HTTP 500 once the script runs out; 'repeat-last' replays the last turn. */
  onExhausted?: 'error' | 'repeat-last';
  /**
   * Answers some requests outside the script, without using up a turn: for requests the runtime
   * makes on its own schedule, such as summaries when it compacts the history.
   */
  sideTurn?: (request: RecordedChatRequest) => ScriptedTurn | undefined;
  /** Called once per request after its reply ends or its connection closes. */
  onRecorded?: (request: RecordedRequest) => void;
}

export interface ScriptedModelServer {
  /** Ends in /v1, ready for `new OpenAI({ baseURL })`. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Kept even when the client retried past the 500, so a test can still fail on them. */
  readonly expectationFailures: ExpectationFailure[];
  /** Replaces the script and starts again at its first turn. */
  setTurns(turns: ScriptedTurn[]): void;
  pushTurns(...turns: ScriptedTurn[]): void;
  /** Stops listening, destroys open connections and abandons delayed replies. */
  close(): Promise<void>;
}

export class ScriptFileError extends ManusError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('script_invalid', message, options);
  }
}

/** Reads a JSON array of turns, so a child process can be handed a script through a file. */
export function scriptFromFile(path: string): ScriptedTurn[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ScriptFileError(`cannot read script ${path}: ${errorMessage(error)}`, { cause: error });
  }
  if (!Array.isArray(parsed)) throw new ScriptFileError(`script ${path} must be a JSON array of turns`);
  parsed.forEach((turn, index) => {
    if (typeof turn !== 'object' || turn === null || Array.isArray(turn)) {
      throw new ScriptFileError(`script ${path}: turn ${index} must be an object`);
    }
  });
  return parsed as ScriptedTurn[];
}

export async function startScriptedModelServer(options: ScriptedModelServerOptions): Promise<ScriptedModelServer> {
  const script = new Script(options.turns, options.onExhausted ?? 'error');
  const requests: RecordedRequest[] = [];
  const expectationFailures: ExpectationFailure[] = [];
  const closing = new AbortController();
  // Every delayed reply listens to it.
  setMaxListeners(0, closing.signal);
  const server = createServer({ keepAlive: true, noDelay: true }, (request, response) => {
    handleRequest(request, response).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else sendError(response, 500, `scripted model server failed: ${errorMessage(error)}`, 'server_error', null);
    });
  });

  async function handleRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const receivedAt = now();
    const rawBody = await readBody(request);
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      headers: joinHeaders(request.headers),
      body: parseBody(rawBody),
      receivedAt,
      turnIndex: null,
    };
    requests.push(recorded);
    response.once('finish', () => {
      recorded.repliedAt = now();
    });
    response.once('close', () => options.onRecorded?.(recorded));

    const route = `${recorded.method} ${recorded.path.split('?')[0]}`;
    if (route === 'GET /v1/models') return sendModelList(response);
    // Azure OpenAI puts the deployment in the path: /openai/deployments/<name>/chat/completions.
    if (route !== 'POST /v1/chat/completions' && !/^POST \/openai\/deployments\/[^/]+\/chat\/completions$/.test(route)) {
      return sendError(response, 404, `no route for ${route}`, 'invalid_request_error', 'unknown_url');
    }
    if (!isChatRequestBody(recorded.body)) {
      return sendError(response, 400, 'the body must be a JSON object with a messages array', 'invalid_request_error', null);
    }
    await answerChatRequest(recorded as RecordedChatRequest, response);
  }

  async function answerChatRequest(recorded: RecordedChatRequest, response: ServerResponse): Promise<void> {
    const requestNumber = script.countRequest();
    const aside = options.sideTurn?.(recorded);
    const next = aside ? { turn: aside, turnIndex: null } : script.take();
    if (!next) {
      const message =
        `scripted model: the script is exhausted at request ${requestNumber} ` +
        `(${script.length} turn${script.length === 1 ? '' : 's'} scripted)`;
      return sendError(response, 500, message, 'server_error', 'script_exhausted');
    }
    const { turn, turnIndex } = next;
    recorded.turnIndex = turnIndex;
    try {
      turn.expect?.(recorded);
    } catch (error) {
      const message = `scripted model: expectation failed at turn ${turnIndex}: ${errorMessage(error)}`;
      expectationFailures.push({ turnIndex, message: errorMessage(error) });
      return sendError(response, 500, message, 'server_error', 'expectation_failed');
    }
    if (turn.delayMs) {
      const completed = await delay(turn.delayMs, true, { signal: closing.signal }).catch(() => false);
      if (!completed || connectionClosed(response)) return;
    }
    const streaming = recorded.body.stream === true;
    if (turn.fault?.kind === 'stall') return sendStall(response, buildReply(turn, requestNumber - 1, recorded.body), streaming);
    if (turn.fault) return sendFault(response, turn.fault, streaming, recorded.body.model);
    const reply = buildReply(turn, requestNumber - 1, recorded.body);
    if (streaming) sendStream(response, reply, recorded.body.stream_options?.include_usage === true);
    else sendJson(response, 200, completionObject(reply));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let closed: Promise<void> | undefined;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    expectationFailures,
    setTurns: (turns) => script.replace(turns),
    pushTurns: (...turns) => script.append(turns),
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        closing.abort();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/** The turns, the position in them, and how many chat requests have arrived. */
class Script {
  private turns: ScriptedTurn[];
  private cursor = 0;
  private requestCount = 0;

  constructor(
    turns: ScriptedTurn[],
    private readonly onExhausted: 'error' | 'repeat-last',
  ) {
    this.turns = [...turns];
  }

  get length(): number {
    return this.turns.length;
  }

  countRequest(): number {
    this.requestCount += 1;
    return this.requestCount;
  }

  take(): { turn: ScriptedTurn; turnIndex: number } | undefined {
    if (this.cursor < this.turns.length) {
      const turnIndex = this.cursor;
      this.cursor += 1;
      return { turn: this.turns[turnIndex], turnIndex };
    }
    if (this.onExhausted === 'repeat-last' && this.turns.length > 0) {
      const turnIndex = this.turns.length - 1;
      return { turn: this.turns[turnIndex], turnIndex };
    }
    return undefined;
  }

  replace(turns: ScriptedTurn[]): void {
    this.turns = [...turns];
    this.cursor = 0;
  }

  append(turns: ScriptedTurn[]): void {
    this.turns.push(...turns);
  }
}

interface Reply {
  id: string;
  created: number;
  model: string;
  content: string | null;
  reasoning?: string;
  toolCalls: ChatCompletionMessageFunctionToolCall[];
  /** Scripts may name finish reasons outside the SDK's union to test how the client copes. */
  finishReason: ChatCompletion.Choice['finish_reason'];
  usage: NonNullable<ChatCompletion['usage']>;
}

/** Tool call ids are call_<request>_<n>, counting chat requests from 0, so they stay unique under repeat-last. */
function buildReply(turn: ScriptedTurn, requestIndex: number, body: ChatCompletionCreateParams): Reply {
  const toolCalls = (turn.toolCalls ?? []).map(
    (call, index): ChatCompletionMessageFunctionToolCall => ({
      id: call.id ?? `call_${requestIndex}_${index}`,
      type: 'function',
      function: {
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      },
    }),
  );
  const content = turn.content ?? null;
  const finishReason = turn.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
  return {
    id: `chatcmpl-scripted-${requestIndex}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model || scriptedModelName,
    content,
    reasoning: turn.reasoning,
    toolCalls,
    finishReason: finishReason as Reply['finishReason'],
    usage: withTotal(turn.usage ?? estimateUsage(body, content, turn.reasoning, toolCalls)),
  };
}

function estimateUsage(
  body: ChatCompletionCreateParams,
  content: string | null,
  reasoning: string | undefined,
  toolCalls: ChatCompletionMessageFunctionToolCall[],
): ScriptedUsage {
  let replyLength = (content ?? '').length + (reasoning ?? '').length;
  for (const call of toolCalls) replyLength += call.function.name.length + call.function.arguments.length;
  return {
    prompt_tokens: Math.ceil(JSON.stringify(body.messages).length / 4),
    completion_tokens: Math.ceil(replyLength / 4),
  };
}

function withTotal(usage: ScriptedUsage): Reply['usage'] {
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

type AssistantMessage = ChatCompletion.Choice['message'] & { reasoning_content?: string };

function completionObject(reply: Reply): ChatCompletion {
  const message: AssistantMessage = { role: 'assistant', content: reply.content, refusal: null };
  if (reply.reasoning !== undefined) message.reasoning_content = reply.reasoning;
  if (reply.toolCalls.length > 0) message.tool_calls = reply.toolCalls;
  return {
    id: reply.id,
    object: 'chat.completion',
    created: reply.created,
    model: reply.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason }],
    usage: reply.usage,
  };
}

type ChunkDelta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: string };

/** The whole event stream is written at once: the client still parses it event by event. */
function sendStream(response: ServerResponse, reply: Reply, includeUsage: boolean): void {
  const events: string[] = [];
  const chunk = (delta: ChunkDelta, finishReason: Reply['finishReason'] | null = null): void => {
    const choice: ChatCompletionChunk.Choice = { index: 0, delta, logprobs: null, finish_reason: finishReason };
    events.push(chunkEvent(reply, [choice], includeUsage ? null : undefined));
  };
  chunk({ role: 'assistant', content: reply.content === null ? null : '' });
  for (const fragment of fragments(reply.reasoning ?? '')) chunk({ reasoning_content: fragment });
  for (const fragment of fragments(reply.content ?? '')) chunk({ content: fragment });
  reply.toolCalls.forEach((call, index) => {
    chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
    for (const fragment of fragments(call.function.arguments)) {
      chunk({ tool_calls: [{ index, function: { arguments: fragment } }] });
    }
  });
  chunk({}, reply.finishReason);
  if (includeUsage) events.push(chunkEvent(reply, [], reply.usage));
  events.push('data: [DONE]\n\n');
  startEventStream(response);
  response.end(events.join(''));
}

function chunkEvent(reply: Reply, choices: ChatCompletionChunk.Choice[], usage: Reply['usage'] | null | undefined): string {
  const chunk: ChatCompletionChunk = {
    id: reply.id,
    object: 'chat.completion.chunk',
    created: reply.created,
    model: reply.model,
    choices,
  };
  if (usage !== undefined) chunk.usage = usage;
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** Splits into at most three pieces on code point boundaries, as streamed deltas arrive. */
function fragments(text: string): string[] {
  if (text === '') return [];
  const codePoints = Array.from(text);
  const size = Math.ceil(codePoints.length / 3);
  const pieces: string[] = [];
  for (let start = 0; start < codePoints.length; start += size) {
    pieces.push(codePoints.slice(start, start + size).join(''));
  }
  return pieces;
}

function sendFault(response: ServerResponse, fault: ScriptedFault, streaming: boolean, model: string): void {
  switch (fault.kind) {
    case 'status': {
      const described = describeStatus(fault.status);
      const headers: Record<string, string> = fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter };
      return sendError(response, fault.status, fault.message ?? described.message, fault.type ?? described.type, fault.code ?? described.code, headers);
    }
    case 'empty-choices': {
      const empty: ChatCompletion = {
        id: 'chatcmpl-scripted-empty',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: model || scriptedModelName,
        choices: [],
      };
      if (!streaming) return sendJson(response, 200, empty);
      startEventStream(response);
      return void response.end(`data: ${JSON.stringify({ ...empty, object: 'chat.completion.chunk' })}\n\ndata: [DONE]\n\n`);
    }
    case 'malformed-body': {
      if (!streaming) {
        response.writeHead(200, { 'content-type': 'application/json' });
        return void response.end('{"id": "chatcmpl-scripted", "choices": [{"message": ');
      }
      startEventStream(response);
      return void response.end('data: {"id": "chatcmpl-scripted", "choices": [\n\ndata: [DONE]\n\n');
    }
    case 'drop-connection':
      return void response.socket?.destroy();
    default:
      return sendError(response, 500, `scripted model: unknown fault ${JSON.stringify(fault)}`, 'server_error', 'script_invalid');
  }
}

function sendStall(response: ServerResponse, reply: Reply, streaming: boolean): void {
  const [call] = reply.toolCalls;
  const halfArguments = call ? call.function.arguments.slice(0, Math.ceil(call.function.arguments.length / 2)) : '';
  if (!streaming) {
    response.writeHead(200, { 'content-type': 'application/json' });
    return void response.write(JSON.stringify(completionObject(reply)).slice(0, 40));
  }
  const delta: ChunkDelta = call
    ? { role: 'assistant', tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: halfArguments } }] }
    : { role: 'assistant', content: (reply.content ?? '').slice(0, Math.ceil((reply.content ?? '').length / 2)) };
  startEventStream(response);
  response.write(chunkEvent(reply, [{ index: 0, delta, logprobs: null, finish_reason: null }], undefined));
}

/** Error types and codes as OpenAI sends them for each status. */
function describeStatus(status: number): { type: string; code: string | null; message: string } {
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' };
  if (status === 403) return { type: 'permission_error', code: null, message: 'You are not allowed to use this model.' };
  if (status === 404) return { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist.' };
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests.' };
  if (status >= 500) return { type: 'server_error', code: null, message: 'The server had an error while processing your request.' };
  return { type: 'invalid_request_error', code: null, message: `scripted status ${status}` };
}

function sendModelList(response: ServerResponse): void {
  sendJson(response, 200, {
    object: 'list',
    data: [{ id: scriptedModelName, object: 'model', created: 0, owned_by: 'manus-runtime' }],
  });
}

function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null,
  headers: Record<string, string> = {},
): void {
  sendJson(response, status, { error: { message, type, param: null, code } }, headers);
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

function startEventStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
}

function connectionClosed(response: ServerResponse): boolean {
  return response.destroyed || response.socket === null || response.socket.destroyed;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseBody(raw: string): unknown {
  if (raw === '') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function isChatRequestBody(body: unknown): body is ChatCompletionCreateParams {
  return typeof body === 'object' && body !== null && Array.isArray((body as { messages?: unknown }).messages);
}

function joinHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const joined: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) joined[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return joined;
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** `node --import tsx scripted-model-server.ts script.json`: serve until SIGTERM or SIGINT. */
async function serveFromCommandLine(scriptPath: string | undefined): Promise<void> {
  if (!scriptPath) throw new ScriptFileError('usage: scripted-model-server <script.json>');
  const logPath = process.env.SCRIPTED_MODEL_LOG;
  const log = logPath ? createWriteStream(logPath, { flags: 'a' }) : undefined;
  const server = await startScriptedModelServer({
    turns: scriptFromFile(scriptPath),
    onRecorded: (request) => {
      if (log && !log.writableEnded) log.write(`${JSON.stringify(request)}\n`);
    },
  });
  const stop = async (): Promise<void> => {
    await server.close();
    log?.end();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(`${JSON.stringify({ baseUrl: server.baseUrl })}\n`);
}

function isExecutedDirectly(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isExecutedDirectly()) {
  serveFromCommandLine(process.argv[2]).catch((error: unknown) => {
    process.stderr.write(`${errorMessage(error)}\n`);
    process.exitCode = ExitCode.usage;
  });
}

/** Runs `body` with a scripted model server playing `turns`, closed afterwards whatever happens. */
export async function withScriptedModelServer<T>(turns: ScriptedTurn[], body: (server: ScriptedModelServer) => Promise<T>): Promise<T> {
  const server = await startScriptedModelServer({ turns });
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}
