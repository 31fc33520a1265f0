import { describe, expect, it } from 'vitest';
import { makeFixture, readEvents, runCli } from './support/run-cli.js';
import { runScripted, terminate } from './support/loop-fixture.js';
import type { ScriptedTurn } from './support/scripted-model-server.js';

describe('retry policy', () => {
  it('honours Retry-After on 429 and then succeeds', async () => {
    const run = await runScripted([{ fault: { kind: 'status', status: 429, retryAfter: '1' } }, terminate('after the wait')]);
    expect(run.exitCode).toBe(0);
    expect(run.json.answer).toBe('after the wait');
    expect(run.requests).toHaveLength(2);
    const waited = run.requests[1].receivedAt - run.requests[0].repliedAt!;
    expect(waited).toBeGreaterThanOrEqual(950);
    const retry = readEvents(run.json.runDirectory).find((event) => event.type === 'model-retry');
    expect(retry).toMatchObject({ attempt: 1, delayMs: 1000 });
    expect(retry!.reason).toContain('rate_limited');
    expect(run.stderr).toContain('retrying the model request in 1.0 s');
  });

  it('with a rate limit, waits out a 429 in the shared limiter and records the wait', async () => {
    const run = await runScripted([{ fault: { kind: 'status', status: 429, retryAfter: '1' } }, terminate('after the wait')], {
      profile: 'rate_limit: { requests_per_minute: 10, max_concurrent: 2 }',
    });
    expect(run.exitCode).toBe(0);
    expect(run.json.answer).toBe('after the wait');
    expect(run.requests[1].receivedAt - run.requests[0].repliedAt!).toBeGreaterThanOrEqual(950);
    const events = readEvents(run.json.runDirectory);
    expect(events.find((event) => event.type === 'model-retry')).toMatchObject({ attempt: 1, delayMs: 1000 });
    const wait = events.find((event) => event.type === 'model-rate-wait')!;
    expect(wait).toMatchObject({ limit: 'provider_rate_limit' });
    expect(wait.waitMs).toBeGreaterThanOrEqual(950);
    expect(run.stderr).toContain("waited 1.0 s for the profile's rate limit (provider_rate_limit)");
  });

  it('gives up at once when Retry-After exceeds the cap', async () => {
    const run = await runScripted([{ fault: { kind: 'status', status: 429, retryAfter: '3600' } }, terminate()]);
    expect(run.exitCode).toBe(4);
    expect(run.requests).toHaveLength(1);
    expect(run.json).toMatchObject({ status: 'provider-failed', error: { code: 'provider_rate_limited' } });
  });

  it('backs off and retries server errors, dropped connections and empty replies', async () => {
    const run = await runScripted([
      { fault: { kind: 'status', status: 500 } },
      { fault: { kind: 'drop-connection' } },
      { fault: { kind: 'empty-choices' } },
      { fault: { kind: 'malformed-body' } },
      { fault: { kind: 'status', status: 503 } },
      terminate('survived'),
    ], { profile: 'retry: { base_delay_ms: 5, max_delay_ms: 20, max_attempts: 6 }' });
    expect(run.exitCode).toBe(0);
    expect(run.json.answer).toBe('survived');
    expect(run.requests).toHaveLength(6);
    const retries = readEvents(run.json.runDirectory).filter((event) => event.type === 'model-retry');
    expect(retries.map((event) => event.reason.split(':')[0])).toEqual(['server_error', 'unreachable', 'malformed_reply', 'malformed_reply', 'server_error']);
  });

  it('fails with exit 4 when errors outlast the attempts', async () => {
    const fault = { fault: { kind: 'status' as const, status: 500 } };
    const run = await runScripted([fault, fault, fault, fault], { profile: 'retry: { base_delay_ms: 5, max_attempts: 3 }' });
    expect(run.exitCode).toBe(4);
    expect(run.requests).toHaveLength(3);
    expect(run.json.answer).toContain('after 3 attempts');
    const end = readEvents(run.json.runDirectory).at(-1)!;
    expect(end).toMatchObject({ type: 'run-end', status: 'provider-failed', exitCode: 4 });
  });

  it('fails at once on 401 with a message that says what to fix', async () => {
    const run = await runScripted([{ fault: { kind: 'status', status: 401, message: 'Incorrect API key provided' } }, terminate()]);
    expect(run.exitCode).toBe(4);
    expect(run.requests).toHaveLength(1);
    expect(run.json.error.code).toBe('provider_authentication');
    expect(run.json.answer).toContain('rejected the API key (401) from OPENAI_API_KEY');
    expect(run.json.answer).toContain('Incorrect API key provided');
  });

  it('fails at once on an unknown model (404)', async () => {
    const run = await runScripted([{ fault: { kind: 'status', status: 404, message: 'The model does not exist' } }]);
    expect(run.exitCode).toBe(4);
    expect(run.requests).toHaveLength(1);
    expect(run.json.answer).toContain("does not know model 'scripted-model'");
  });

  it('times out a reply that never comes and retries it', async () => {
    const run = await runScripted([{ delayMs: 5000, content: 'late' }, terminate('on time')], {
      profile: 'timeout_seconds: 0.5\nretry: { base_delay_ms: 5 }',
    });
    expect(run.exitCode).toBe(0);
    expect(run.json.answer).toBe('on time');
    const retry = readEvents(run.json.runDirectory).find((event) => event.type === 'model-retry');
    expect(retry!.reason).toMatch(/^timeout/);
  });
});

describe('stalled streams', () => {
  const streamed = 'stream: true\nstream_idle_timeout_seconds: 1\nretry: { base_delay_ms: 5 }';
  const stalled = (text: string): ScriptedTurn => ({ toolCalls: [{ name: 'echo', arguments: { text } }], fault: { kind: 'stall' } });

  it('abandons a stream that goes quiet mid tool call and retries; the half call is never recorded or run', async () => {
    const run = await runScripted([stalled('from the stalled reply'), terminate('after the stall')], { profile: streamed });
    expect(run.exitCode).toBe(0);
    expect(run.json.answer).toBe('after the stall');
    expect(run.requests).toHaveLength(2);
    const events = readEvents(run.json.runDirectory);
    const retry = events.find((event) => event.type === 'model-retry')!;
    expect(retry.reason).toBe('timeout: the reply stream sent nothing for 1 s (stream_idle_timeout_seconds)');
    const responses = events.filter((event) => event.type === 'model-response');
    expect(responses).toHaveLength(1);
    expect(JSON.stringify(responses)).not.toContain('stalled');
    expect(events.filter((event) => event.type === 'tool-call-start').map((event) => event.tool)).toEqual(['terminate']);
  });

  it('closes the connection of a stream it abandons', async () => {
    const { startScriptedModelServer } = await import('./support/scripted-model-server.js');
    const { ModelClient } = await import('../runtime/services/model/model-client.js');
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    // Called when the reply's connection closes; the server itself never ends a stalled reply.
    const server = await startScriptedModelServer({ turns: [stalled('never finished')], onRecorded: () => closed() });
    try {
      const client = new ModelClient({
        provider: 'openai-compatible',
        baseUrl: server.baseUrl,
        apiKey: 'test-key',
        model: 'scripted-model',
        reasoning: false,
        headers: {},
        profile: {
          name: 'default', provider: 'openai-compatible', vision: false, stream: true, timeoutSeconds: 30,
          streamIdleTimeoutSeconds: 0.3, headers: {}, retry: { maxAttempts: 1, baseDelayMs: 5, maxDelayMs: 5, maxRetryAfterSeconds: 1 }, fallback: [], fallbackCooldownSeconds: 300, cache: 'automatic',
        },
      });
      const failure = await client.complete({ messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'provider_timeout' });
      await connectionClosed;
      expect(server.requests[0].repliedAt).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('bounds a whole streamed reply by timeout_seconds too', async () => {
    const run = await runScripted([stalled('slow'), terminate('after the timeout')], {
      profile: 'stream: true\ntimeout_seconds: 0.5\nretry: { base_delay_ms: 5 }',
    });
    expect(run.exitCode).toBe(0);
    const retry = readEvents(run.json.runDirectory).find((event) => event.type === 'model-retry')!;
    expect(retry.reason).toBe('timeout: the reply did not finish within 0.5 s (timeout_seconds)');
  });

  it('fails with exit 4 and says why when every attempt stalls', async () => {
    const run = await runScripted([stalled('one'), stalled('two'), terminate()], {
      profile: 'stream: true\nstream_idle_timeout_seconds: 0.5\nretry: { base_delay_ms: 5, max_attempts: 2 }',
    });
    expect(run.exitCode).toBe(4);
    expect(run.requests).toHaveLength(2);
    expect(run.json).toMatchObject({ status: 'provider-failed', error: { code: 'provider_timeout' } });
    expect(run.json.answer).toContain('did not answer in time after 2 attempts');
    expect(run.json.answer).toContain('the reply stream sent nothing for 0.5 s (stream_idle_timeout_seconds)');
    const events = readEvents(run.json.runDirectory);
    expect(events.filter((event) => event.type === 'model-response' || event.type === 'tool-call-start')).toEqual([]);
  });
});

describe('exhausted quota', () => {
  it('fails at once with exit 4 and the provider\'s message on an insufficient_quota 429', async () => {
    const message = 'You exceeded your current quota, please check your plan and billing details.';
    const run = await runScripted([
      { fault: { kind: 'status', status: 429, type: 'insufficient_quota', code: 'insufficient_quota', message } },
      terminate(),
    ]);
    expect(run.exitCode).toBe(4);
    expect(run.requests).toHaveLength(1);
    expect(run.json).toMatchObject({ status: 'provider-failed', error: { code: 'provider_quota_exceeded' } });
    expect(run.json.answer).toContain(message);
    expect(run.json.answer).toContain('out of quota or credit (429)');
    expect(readEvents(run.json.runDirectory).filter((event) => event.type === 'model-retry')).toEqual([]);
  });

  it('still waits out an ordinary rate limit whose message links to the billing page', async () => {
    const message = 'Rate limit reached for requests. Visit https://platform.openai.com/account/billing to add a payment method.';
    const run = await runScripted([{ fault: { kind: 'status', status: 429, retryAfter: '0', message } }, terminate('waited')]);
    expect(run.exitCode).toBe(0);
    expect(run.requests).toHaveLength(2);
  });
});

describe('model configuration', () => {
  it('exits 4 with one message saying what to set when no model is reachable', async () => {
    const fixture = makeFixture({ 'recipe.yaml': 'version: 1\nname: lonely\nprompt: hi\nagent: assistant\n' });
    const run = await runCli(['run', 'recipe.yaml'], { cwd: fixture, env: { OLLAMA_HOST: '127.0.0.1:9' } });
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('No model is configured. Set OPENAI_API_KEY');
    expect(run.stderr).toContain('OPENAI_BASE_URL and MANUS_MODEL');
    expect(run.stderr.trim().split('\n').filter((line) => line.startsWith('manus:'))).toHaveLength(1);
  });

  it('finds a local Ollama-style server when nothing else is configured', async () => {
    const { startScriptedModelServer } = await import('./support/scripted-model-server.js');
    const server = await startScriptedModelServer({ turns: [{ content: 'Hello from the local model.' }] });
    try {
      const host = new URL(server.baseUrl).host;
      const fixture = makeFixture({ 'recipe.yaml': 'version: 1\nname: local\nprompt: hi\nagent: assistant\n' });
      const run = await runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: { OLLAMA_HOST: host } });
      expect(run.exitCode).toBe(0);
      // No model id was configured: the first one the server lists is used.
      expect(run.json).toMatchObject({ answer: 'Hello from the local model.', model: 'scripted-model' });
      const chat = server.requests.find((request) => request.path.endsWith('/chat/completions'))!;
      expect(chat.headers.authorization).toBe('Bearer not-needed');
    } finally {
      await server.close();
    }
  });

  it('picks a profile by name with --model and sends its settings', async () => {
    const run = await runScripted([{ content: 'ok' }], {
      agentsYaml: [
        'version: 1',
        'llm:',
        '  default: { model: default-model }',
        '  careful: { model: careful-model, temperature: 0.1, max_tokens: 300 }',
      ].join('\n'),
      args: ['--model', 'careful'],
      env: { MANUS_MODEL: undefined },
    });
    expect(run.exitCode).toBe(0);
    expect(run.requests[0].body).toMatchObject({ model: 'careful-model', temperature: 0.1, max_tokens: 300 });
  });

  it('sends reasoning-model parameters to reasoning models', async () => {
    const run = await runScripted([{ content: 'ok', reasoning: 'Let me think.' }], {
      profile: 'model: o4-mini\nmax_tokens: 500\ntemperature: 0.3\nreasoning_effort: high',
      env: { MANUS_MODEL: undefined },
    });
    expect(run.exitCode).toBe(0);
    expect(run.requests[0].body).toMatchObject({ model: 'o4-mini', max_completion_tokens: 500, reasoning_effort: 'high' });
    expect(run.requests[0].body).not.toHaveProperty('temperature');
    expect(run.requests[0].body).not.toHaveProperty('max_tokens');
    const response = readEvents(run.json.runDirectory).find((event) => event.type === 'model-response');
    expect(response!.reasoning).toBe('Let me think.');
  });

  it('works without streaming too', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'echo', arguments: { text: 'plain' } }] }, terminate('unstreamed')], {
      profile: 'stream: false',
    });
    expect(run.exitCode).toBe(0);
    expect(run.json.answer).toBe('unstreamed');
    expect(run.requests[0].body.stream).toBe(false);
  });

  it('streams when the profile asks, with usage in the stream', async () => {
    const run = await runScripted([{ content: 'streamed text' }], { profile: 'stream: true' });
    expect(run.json.answer).toBe('streamed text');
    expect(run.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('does not stream when no one watches the text arrive', async () => {
    const run = await runScripted([terminate()]);
    expect(run.requests[0].body.stream).toBe(false);
  });
});

describe('Azure OpenAI', () => {
  it('reaches a deployment with the api-version and api-key header', async () => {
    const { startScriptedModelServer } = await import('./support/scripted-model-server.js');
    const { writeLoopFixture } = await import('./support/loop-fixture.js');
    const server = await startScriptedModelServer({ turns: [{ content: 'from azure' }] });
    try {
      const endpoint = server.baseUrl.replace(/\/v1$/, '');
      const fixture = writeLoopFixture({
        agentsYaml: 'version: 1\nllm:\n  default: { provider: azure, deployment: gpt-4o-prod, api_version: 2024-10-21 }\n',
      });
      // The endpoint comes from the user's environment: a project agents.yaml that names its own would need --trust env.
      const run = await runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: { AZURE_OPENAI_API_KEY: 'azure-key-123', AZURE_OPENAI_ENDPOINT: endpoint } });
      expect(run.exitCode).toBe(0);
      expect(run.json.answer).toBe('from azure');
      const request = server.requests.find((entry) => entry.path.includes('/chat/completions'))!;
      expect(request.path).toBe('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21');
      expect(request.headers['api-key']).toBe('azure-key-123');
    } finally {
      await server.close();
    }
  });

  it('names every missing Azure variable at once, before any request', async () => {
    const { writeLoopFixture } = await import('./support/loop-fixture.js');
    const fixture = writeLoopFixture({ agentsYaml: 'version: 1\nllm:\n  default: { provider: azure, deployment: gpt-4o }\n' });
    const run = await runCli(['run', 'recipe.yaml'], { cwd: fixture });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('needs environment variables that are not set: AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT');
  });
});
