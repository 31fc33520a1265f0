import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import OpenAI, { APIConnectionError, AuthenticationError, InternalServerError, RateLimitError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ScriptFileError,
  scriptFromFile,
  startScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
  type ScriptedModelServerOptions,
} from './support/scripted-model-server.js';

const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are a test.' },
  { role: 'user', content: 'Say hello.' },
];

let server: ScriptedModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: ScriptedModelServerOptions): Promise<{ server: ScriptedModelServer; client: OpenAI }> {
  server = await startScriptedModelServer(options);
  // logLevel off: the SDK logs unparsable stream events itself before throwing.
  const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'test', maxRetries: 0, logLevel: 'off' });
  return { server, client };
}

function chatRequests(recorded: RecordedRequest[]): RecordedRequest[] {
  return recorded.filter((request) => request.path === '/v1/chat/completions');
}

describe('non-streaming replies', () => {
  it('answers a text turn with the request model and estimated usage', async () => {
    const { client } = await start({ turns: [{ content: 'Hello there.' }] });
    const completion = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('gpt-test');
    expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello there.' });
    expect(completion.choices[0].message.tool_calls).toBeUndefined();
    expect(completion.choices[0].finish_reason).toBe('stop');
    const promptTokens = Math.ceil(JSON.stringify(messages).length / 4);
    expect(completion.usage).toEqual({
      prompt_tokens: promptTokens,
      completion_tokens: Math.ceil('Hello there.'.length / 4),
      total_tokens: promptTokens + Math.ceil('Hello there.'.length / 4),
    });
  });

  it('answers a tool-call turn with generated ids, encoded and verbatim arguments', async () => {
    const { client } = await start({
      turns: [
        { content: 'Working on it.', usage: { prompt_tokens: 11, completion_tokens: 7 } },
        {
          toolCalls: [
            { name: 'bash', arguments: { command: 'ls -la' } },
            { name: 'python_execute', arguments: '{"code": "print(1)"' },
            { id: 'call_custom', name: 'terminate', arguments: { status: 'success' } },
          ],
          reasoning: 'List the files first.',
        },
      ],
    });
    const first = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(first.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    const completion = await client.chat.completions.create({ model: 'gpt-test', messages });
    const message = completion.choices[0].message as typeof completion.choices[0]['message'] & { reasoning_content?: string };
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(message.content).toBeNull();
    expect(message.reasoning_content).toBe('List the files first.');
    expect(message.tool_calls).toEqual([
      { id: 'call_1_0', type: 'function', function: { name: 'bash', arguments: '{"command":"ls -la"}' } },
      { id: 'call_1_1', type: 'function', function: { name: 'python_execute', arguments: '{"code": "print(1)"' } },
      { id: 'call_custom', type: 'function', function: { name: 'terminate', arguments: '{"status":"success"}' } },
    ]);
  });

  it('sends a scripted finish reason', async () => {
    const { client } = await start({ turns: [{ content: 'cut sho', finishReason: 'length' }] });
    const completion = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(completion.choices[0].finish_reason).toBe('length');
  });
});

describe('streaming replies', () => {
  it('streams text in several deltas with a usage chunk when asked', async () => {
    const content = 'Sum 𝑥𝑦𝑧𝑤𝑣𝑢𝑡𝑠𝑟𝑞𝑝𝑜𝑛𝑚 over café.';
    const { client } = await start({ turns: [{ content }, { content }] });
    const stream = await client.chat.completions.create({
      model: 'gpt-test',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    const roles: string[] = [];
    const finishReasons: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.model).toBe('gpt-test');
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        if (choice.delta.role) roles.push(choice.delta.role);
        if (choice.delta.content) deltas.push(choice.delta.content);
        if (choice.finish_reason) finishReasons.push(choice.finish_reason);
      }
    }
    expect(roles).toEqual(['assistant']);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(content);
    // A delta holding half a surrogate pair would not survive a UTF-8 round trip.
    expect(deltas.every((delta) => Buffer.from(delta, 'utf8').toString('utf8') === delta)).toBe(true);
    expect(finishReasons).toEqual(['stop']);
    expect(usage?.completion_tokens).toBe(Math.ceil(content.length / 4));

    const withoutUsage = await client.chat.completions.create({ model: 'gpt-test', messages, stream: true });
    const usages: unknown[] = [];
    for await (const chunk of withoutUsage) if (chunk.usage) usages.push(chunk.usage);
    expect(usages).toEqual([]);
  });

  it('streams tool calls the way OpenAI does, so the arguments reassemble', async () => {
    const { client } = await start({
      turns: [
        {
          content: 'Two calls.',
          reasoning: 'Think first.',
          toolCalls: [
            { name: 'str_replace_editor', arguments: { command: 'view', path: 'notes/a long file name.txt' } },
            { name: 'bash', arguments: 'echo "not json' },
          ],
        },
      ],
    });
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages, stream: true });
    const assembled: Array<{ id?: string; type?: string; name?: string; arguments: string; fragments: number }> = [];
    let reasoning = '';
    let finishReason: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      const delta = choice.delta as typeof choice.delta & { reasoning_content?: string };
      reasoning += delta.reasoning_content ?? '';
      finishReason = choice.finish_reason ?? finishReason;
      for (const part of delta.tool_calls ?? []) {
        if (part.id) {
          expect(part.function?.arguments).toBe('');
          assembled[part.index] = { id: part.id, type: part.type, name: part.function?.name, arguments: '', fragments: 0 };
        } else {
          expect(part.id).toBeUndefined();
          expect(part.function?.name).toBeUndefined();
          assembled[part.index].arguments += part.function?.arguments ?? '';
          assembled[part.index].fragments += 1;
        }
      }
    }
    expect(reasoning).toBe('Think first.');
    expect(finishReason).toBe('tool_calls');
    expect(assembled.map(({ fragments, ...call }) => call)).toEqual([
      {
        id: 'call_0_0',
        type: 'function',
        name: 'str_replace_editor',
        arguments: '{"command":"view","path":"notes/a long file name.txt"}',
      },
      { id: 'call_0_1', type: 'function', name: 'bash', arguments: 'echo "not json' },
    ]);
    expect(assembled.every((call) => call.fragments > 1)).toBe(true);
  });

  it('gives the SDK stream helper a final completion equal to the script', async () => {
    const { client } = await start({
      turns: [{ content: 'Done.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] }],
    });
    const final = await client.chat.completions.stream({ model: 'gpt-test', messages }).finalChatCompletion();
    expect(final.choices[0].message.content).toBe('Done.');
    expect(final.choices[0].message.tool_calls).toEqual([
      { id: 'call_0_0', type: 'function', function: { name: 'terminate', arguments: '{"status":"success"}' } },
    ]);
    expect(final.choices[0].finish_reason).toBe('tool_calls');
  });
});

describe('faults', () => {
  it('sends 429 with Retry-After as a RateLimitError with the header visible', async () => {
    const { client } = await start({
      turns: [{ fault: { kind: 'status', status: 429, retryAfter: '7' } }, { content: 'after the wait' }],
    });
    const error = await client.chat.completions.create({ model: 'gpt-test', messages }).catch((caught) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.status).toBe(429);
    expect(error.headers.get('retry-after')).toBe('7');
    expect(error.code).toBe('rate_limit_exceeded');
    const retried = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(retried.choices[0].message.content).toBe('after the wait');
  });

  it('sends status faults before a stream starts', async () => {
    const { client } = await start({ turns: [{ fault: { kind: 'status', status: 429 } }] });
    const error = await client.chat.completions
      .create({ model: 'gpt-test', messages, stream: true })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.headers.get('retry-after')).toBeNull();
  });

  it('sends 500 as an InternalServerError and 401 as an AuthenticationError with its message', async () => {
    const { client } = await start({
      turns: [
        { fault: { kind: 'status', status: 500 } },
        { fault: { kind: 'status', status: 401, message: 'Incorrect API key provided: te**.' } },
      ],
    });
    const serverError = await client.chat.completions.create({ model: 'gpt-test', messages }).catch((caught) => caught);
    expect(serverError).toBeInstanceOf(InternalServerError);
    expect(serverError.status).toBe(500);
    const authError = await client.chat.completions.create({ model: 'gpt-test', messages }).catch((caught) => caught);
    expect(authError).toBeInstanceOf(AuthenticationError);
    expect(authError.message).toContain('Incorrect API key provided: te**.');
    expect(authError.code).toBe('invalid_api_key');
  });

  it('drops the connection without replying', async () => {
    const { server, client } = await start({ turns: [{ fault: { kind: 'drop-connection' } }] });
    const error = await client.chat.completions.create({ model: 'gpt-test', messages }).catch((caught) => caught);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(server.requests[0].repliedAt).toBeUndefined();
  });

  it('stalls a stream after half a tool call, until the client gives up', async () => {
    const { server, client } = await start({ turns: [{ toolCalls: [{ name: 'bash', arguments: { command: 'rm -rf keep' } }], fault: { kind: 'stall' } }] });
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages, stream: true });
    const chunks = stream[Symbol.asyncIterator]();
    const first = (await chunks.next()).value as OpenAI.Chat.ChatCompletionChunk;
    expect(first.choices[0]).toMatchObject({ finish_reason: null, delta: { tool_calls: [{ function: { name: 'bash', arguments: '{"command":"r' } }] } });
    stream.controller.abort();
    expect(await chunks.next()).toMatchObject({ done: true });
    expect(server.requests[0].repliedAt).toBeUndefined();
  });

  it('sends a status fault with the error type and code it is given', async () => {
    const { client } = await start({ turns: [{ fault: { kind: 'status', status: 429, type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota.' } }] });
    const error = await client.chat.completions.create({ model: 'gpt-test', messages }).catch((caught) => caught);
    expect(error).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(error.message).toContain('You exceeded your current quota.');
  });

  it('replies with empty choices', async () => {
    const { client } = await start({ turns: [{ fault: { kind: 'empty-choices' } }, { fault: { kind: 'empty-choices' } }] });
    const completion = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(completion.choices).toEqual([]);
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages, stream: true });
    const choices: unknown[] = [];
    for await (const chunk of stream) choices.push(...chunk.choices);
    expect(choices).toEqual([]);
  });

  it('replies with a malformed body the client cannot parse, streaming or not', async () => {
    const { client } = await start({ turns: [{ fault: { kind: 'malformed-body' } }, { fault: { kind: 'malformed-body' } }] });
    await expect(client.chat.completions.create({ model: 'gpt-test', messages })).rejects.toBeInstanceOf(SyntaxError);
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages, stream: true });
    const reading = (async () => {
      for await (const chunk of stream) expect(chunk).toBeUndefined();
    })();
    await expect(reading).rejects.toBeInstanceOf(SyntaxError);
  });

  it('delays a reply by the scripted time', async () => {
    const { server, client } = await start({ turns: [{ content: 'slow', delayMs: 250 }] });
    const startedAt = performance.now();
    await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(245);
    const [recorded] = server.requests;
    expect(recorded.repliedAt! - recorded.receivedAt).toBeGreaterThanOrEqual(245);
  });
});

describe('recording and script control', () => {
  it('records method, path, lower-cased headers, parsed body, times and turn index', async () => {
    const { server, client } = await start({ turns: [{ content: 'one' }, { content: 'two' }] });
    const beforeFirst = performance.timeOrigin + performance.now();
    await client.chat.completions.create({ model: 'gpt-test', messages, temperature: 0.2 });
    await client.models.list();
    await client.chat.completions.create({ model: 'gpt-test', messages: [...messages, { role: 'assistant', content: 'one' }] });
    const [first, models, second] = server.requests;
    expect(first.method).toBe('POST');
    expect(first.path).toBe('/v1/chat/completions');
    expect(first.headers.authorization).toBe('Bearer test');
    expect(first.headers['content-type']).toBe('application/json');
    expect(Object.keys(first.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(first.body).toEqual({ model: 'gpt-test', messages, temperature: 0.2 });
    expect(first.turnIndex).toBe(0);
    expect(first.receivedAt).toBeGreaterThanOrEqual(beforeFirst);
    expect(first.repliedAt).toBeGreaterThanOrEqual(first.receivedAt);
    expect(models).toMatchObject({ method: 'GET', path: '/v1/models', turnIndex: null });
    expect(second.turnIndex).toBe(1);
    expect((second.body as { messages: unknown[] }).messages).toHaveLength(3);
    expect(second.receivedAt).toBeGreaterThanOrEqual(first.repliedAt!);
  });

  it('lists the scripted model and answers unknown routes with an OpenAI-style 404', async () => {
    const { server, client } = await start({ turns: [] });
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['scripted-model']);
    const response = await fetch(`${server.baseUrl}/embeddings`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { message: 'no route for POST /v1/embeddings', type: 'invalid_request_error', param: null, code: 'unknown_url' },
    });
  });

  it('records an unparsable body as raw text and rejects it without consuming a turn', async () => {
    const { server, client } = await start({ turns: [{ content: 'still here' }] });
    const response = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', body: 'not json' });
    expect(response.status).toBe(400);
    expect(server.requests[0]).toMatchObject({ body: 'not json', turnIndex: null });
    const completion = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(completion.choices[0].message.content).toBe('still here');
  });

  it('fails with a clear 500 when the script is exhausted', async () => {
    const { client } = await start({ turns: [{ content: 'only one' }] });
    await client.chat.completions.create({ model: 'gpt-test', messages });
    const error = await client.chat.completions.create({ model: 'gpt-test', messages }).catch((caught) => caught);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.message).toContain('the script is exhausted at request 2 (1 turn scripted)');
    expect(error.code).toBe('script_exhausted');
  });

  it('repeats the last turn with fresh tool call ids when asked to', async () => {
    const { server, client } = await start({
      turns: [{ content: 'first' }, { toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] }],
      onExhausted: 'repeat-last',
    });
    const ids: string[] = [];
    for (let request = 0; request < 4; request += 1) {
      const completion = await client.chat.completions.create({ model: 'gpt-test', messages });
      ids.push(completion.choices[0].message.tool_calls?.[0]?.id ?? completion.choices[0].message.content!);
    }
    expect(ids).toEqual(['first', 'call_1_0', 'call_2_0', 'call_3_0']);
    expect(server.requests.map((request) => request.turnIndex)).toEqual([0, 1, 1, 1]);
  });

  it('replaces and extends the script', async () => {
    const { server, client } = await start({ turns: [{ content: 'a' }, { content: 'b' }] });
    const reply = async () => (await client.chat.completions.create({ model: 'gpt-test', messages })).choices[0].message.content;
    expect(await reply()).toBe('a');
    server.setTurns([{ content: 'c' }]);
    expect(await reply()).toBe('c');
    server.pushTurns({ content: 'd' }, { content: 'e' });
    expect(await reply()).toBe('d');
    expect(await reply()).toBe('e');
    expect(chatRequests(server.requests).map((request) => request.turnIndex)).toEqual([0, 0, 1, 2]);
  });

  it('turns a failing expect hook into a 500 carrying the assertion message', async () => {
    const { server, client } = await start({
      turns: [
        { content: 'checked', expect: (request) => expect(request.body.messages).toHaveLength(2) },
        { content: 'unreached', expect: (request) => expect(request.body.messages).toHaveLength(5) },
      ],
    });
    const passed = await client.chat.completions.create({ model: 'gpt-test', messages });
    expect(passed.choices[0].message.content).toBe('checked');
    const error = await client.chat.completions.create({ model: 'gpt-test', messages }).catch((caught) => caught);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.message).toContain('expectation failed at turn 1');
    expect(error.message).toContain('to have a length of 5 but got 2');
    expect(server.expectationFailures).toHaveLength(1);
    expect(server.expectationFailures[0].turnIndex).toBe(1);
  });

  it('closes open connections, abandoning a delayed reply', async () => {
    const { server, client } = await start({ turns: [{ content: 'never sent', delayMs: 20_000 }] });
    const pending = client.chat.completions.create({ model: 'gpt-test', messages }).catch((caught) => caught);
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const startedAt = performance.now();
    await server.close();
    expect(await pending).toBeInstanceOf(APIConnectionError);
    expect(performance.now() - startedAt).toBeLessThan(2_000);
  });
});

describe('script files and the command line', () => {
  const supportFile = fileURLToPath(new URL('./support/scripted-model-server.ts', import.meta.url));

  it('reads a script file and rejects one that is not an array of turns', () => {
    const folder = mkdtempSync(join(tmpdir(), 'scripted-model-'));
    const good = join(folder, 'good.json');
    writeFileSync(good, JSON.stringify([{ content: 'hi' }, { toolCalls: [{ name: 'bash', arguments: '{' }] }]));
    expect(scriptFromFile(good)).toEqual([{ content: 'hi' }, { toolCalls: [{ name: 'bash', arguments: '{' }] }]);
    const notArray = join(folder, 'object.json');
    writeFileSync(notArray, '{"content": "hi"}');
    expect(() => scriptFromFile(notArray)).toThrow(ScriptFileError);
    const badTurn = join(folder, 'bad-turn.json');
    writeFileSync(badTurn, '[{"content": "hi"}, 3]');
    expect(() => scriptFromFile(badTurn)).toThrow('turn 1 must be an object');
    expect(() => scriptFromFile(join(folder, 'missing.json'))).toThrow(ScriptFileError);
  });

  it('serves a script file from a child process and logs each request', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'scripted-model-'));
    const scriptPath = join(folder, 'script.json');
    const logPath = join(folder, 'requests.jsonl');
    writeFileSync(scriptPath, JSON.stringify([{ content: 'from the child' }]));
    const child = spawn(process.execPath, ['--import', 'tsx', supportFile, scriptPath], {
      env: { ...process.env, SCRIPTED_MODEL_LOG: logPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      const [firstLine] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      const { baseUrl } = JSON.parse(firstLine) as { baseUrl: string };
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const client = new OpenAI({ baseURL: baseUrl, apiKey: 'test', maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'gpt-test', messages });
      expect(completion.choices[0].message.content).toBe('from the child');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toEqual({ code: 0, signal: null });
    const logged = readFileSync(logPath, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as RecordedRequest);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', turnIndex: 0 });
    expect(logged[0].body).toEqual({ model: 'gpt-test', messages });
    expect(logged[0].repliedAt).toBeGreaterThanOrEqual(logged[0].receivedAt);
  });
});
