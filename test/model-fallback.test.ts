import { describe, expect, it } from 'vitest';
import { readModelProfile } from '../runtime/runs/recipe/load-agents.js';
import { ProviderError } from '../runtime/contract/errors.js';
import { FallbackModel, type ProfileSwitch } from '../runtime/services/model/fallback-model.js';
import { ModelClient } from '../runtime/services/model/model-client.js';
import { resolveModelConnection } from '../runtime/services/model/model-connection.js';
import { readEvents, runCli, type CliResult } from './support/run-cli.js';
import { terminate, writeLoopFixture } from './support/loop-fixture.js';
import { startScriptedModelServer, type ScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

const fastRetry = 'retry: { max_attempts: 2, base_delay_ms: 5, max_delay_ms: 10, max_retry_after_seconds: 1 }';
const echo = (text: string): ScriptedTurn => ({ toolCalls: [{ name: 'echo', arguments: { text } }] });
const chats = (server: ScriptedModelServer) => server.requests.filter((request) => request.path.endsWith('/chat/completions'));

/** The run's own profile at `primary` (through OPENAI_BASE_URL), falling back to `backup`. */
async function runWithFallback(primaryTurns: ScriptedTurn[], backupTurns: ScriptedTurn[], options: { cooldown?: number; primaryUrl?: string; prices?: boolean; trust?: boolean } = {}) {
  const primary = await startScriptedModelServer({ turns: primaryTurns });
  const backup = await startScriptedModelServer({ turns: backupTurns });
  try {
    const agentsYaml = [
      'version: 1',
      'llm:',
      '  default:',
      '    model: scripted-model',
      `    ${fastRetry}`,
      '    fallback: [backup]',
      `    fallback_cooldown_seconds: ${options.cooldown ?? 600}`,
      ...(options.prices ? ['    price: { input_per_million: 1, output_per_million: 2 }'] : []),
      '  backup:',
      `    base_url: ${backup.baseUrl}`,
      '    model: backup-model',
      `    ${fastRetry}`,
      ...(options.prices ? ['    price: { input_per_million: 10, output_per_million: 20 }'] : []),
      '',
    ].join('\n');
    const fixture = writeLoopFixture({ agentsYaml });
    const result = await runCli(['run', 'recipe.yaml', '--json', ...(options.trust === false ? [] : ['--trust', 'env'])], {
      cwd: fixture,
      env: { OPENAI_BASE_URL: options.primaryUrl ?? primary.baseUrl, OPENAI_API_KEY: 'test-key' },
    });
    return { result, primary, backup, fixture };
  } finally {
    await Promise.all([primary.close(), backup.close()]);
  }
}

function switches(result: CliResult): Array<Record<string, unknown>> {
  return readEvents(result.json.runDirectory).filter((event) => event.type === 'profile-switch');
}

describe('a fallback chain in a run', () => {
  it('moves to the fallback when the provider is out of quota, and says so', async () => {
    const { result, primary, backup } = await runWithFallback(
      [{ fault: { kind: 'status', status: 429, code: 'insufficient_quota', message: 'You exceeded your current quota' } }],
      [echo('from backup'), terminate('done on backup')],
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.json.answer).toBe('done on backup');
    expect(chats(primary)).toHaveLength(1);
    expect(chats(backup)).toHaveLength(2);
    expect(switches(result)).toEqual([expect.objectContaining({ from: 'default', to: 'backup', reason: expect.stringContaining('quota_exceeded') })]);
    const responses = readEvents(result.json.runDirectory).filter((event) => event.type === 'model-response');
    expect(responses.map((event) => event.profile)).toEqual(['backup', 'backup']);
    expect(result.stderr).toContain('the model profile default gave way to backup');
  });

  it('moves on after its own retries of server errors, and after a refused connection', async () => {
    const serverErrors = await runWithFallback(
      [{ fault: { kind: 'status', status: 503 } }, { fault: { kind: 'status', status: 502 } }],
      [terminate('done on backup')],
    );
    expect(serverErrors.result.exitCode, serverErrors.result.stderr).toBe(0);
    expect(chats(serverErrors.primary)).toHaveLength(2);
    expect(switches(serverErrors.result)[0].reason).toContain('server_error');

    const refused = await runWithFallback([], [terminate('done on backup')], { primaryUrl: 'http://127.0.0.1:9/v1' });
    expect(refused.result.exitCode, refused.result.stderr).toBe(0);
    expect(switches(refused.result)[0].reason).toContain('unreachable');
  });

  it('moves on after a rate limit its retries could not wait out', async () => {
    const limited: ScriptedTurn = { fault: { kind: 'status', status: 429, retryAfter: '3600', message: 'Rate limit reached' } };
    const { result, backup } = await runWithFallback([limited], [terminate('done on backup')]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(chats(backup)).toHaveLength(1);
    expect(switches(result)[0].reason).toContain('rate_limited');
  });

  it('never moves on a request\'s own fault or a rejected key', async () => {
    const badRequest = await runWithFallback([{ fault: { kind: 'status', status: 400, message: 'bad tool schema' } }], [terminate()]);
    expect(badRequest.result.exitCode).toBe(4);
    expect(chats(badRequest.backup)).toHaveLength(0);

    const rejectedKey = await runWithFallback([{ fault: { kind: 'status', status: 401, message: 'invalid api key' } }], [terminate()]);
    expect(rejectedKey.result.exitCode).toBe(4);
    expect(rejectedKey.result.json.error.message).toContain('rejected the API key');
    expect(chats(rejectedKey.backup)).toHaveLength(0);
  });

  it('tries its own profile again once the cooldown has passed', async () => {
    const { result, primary, backup } = await runWithFallback(
      [{ fault: { kind: 'status', status: 503 } }, { fault: { kind: 'status', status: 503 } }, terminate('back on the first')],
      [{ ...echo('slow'), delayMs: 1200 }],
      { cooldown: 1 },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.json.answer).toBe('back on the first');
    expect(chats(primary)).toHaveLength(3);
    expect(chats(backup)).toHaveLength(1);
    expect(switches(result).map((event) => [event.from, event.to, event.reason])).toEqual([
      ['default', 'backup', expect.stringContaining('server_error')],
      ['backup', 'default', 'the cooldown ended'],
    ]);
  });

  it('counts what every profile spent in the budgets, each at its own price', async () => {
    const usage = { prompt_tokens: 1_000_000, completion_tokens: 0 };
    const { result } = await runWithFallback(
      [{ ...echo('first'), usage }, { fault: { kind: 'status', status: 503 } }, { fault: { kind: 'status', status: 503 } }],
      [{ ...terminate(), usage }],
      { prices: true },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.json.usage.promptTokens).toBe(2_000_000);
    expect(result.json.cost).toBeCloseTo(1 + 10, 8);
  });

  it('keeps each reply\'s profile in a replay, so the replay costs what the run did', async () => {
    const usage = { prompt_tokens: 1_000_000, completion_tokens: 0 };
    const { result, fixture } = await runWithFallback(
      [{ ...echo('first'), usage }, { fault: { kind: 'status', status: 503 } }, { fault: { kind: 'status', status: 503 } }],
      [{ ...terminate(), usage }],
      { prices: true },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const replay = await runCli(['replay', result.json.runId, '--json', '--trust', 'env'], { cwd: fixture, env: { OPENAI_API_KEY: 'test-key' } });
    expect(replay.exitCode, replay.stderr).toBe(0);
    expect(replay.json.cost).toBeCloseTo(result.json.cost, 8);
  });

  it('needs the user\'s grant before a fallback from a shipped agents.yaml receives their key', async () => {
    const { result, backup } = await runWithFallback([{ fault: { kind: 'status', status: 503 } }], [terminate()], { trust: false });
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('llm.backup.base_url');
    expect(result.stderr).toContain('rerun with --trust env');
    expect(chats(backup)).toHaveLength(0);
  });
});

describe('the fallback chain over real HTTP', () => {
  async function chainOf(servers: ScriptedModelServer[], windows: Array<number | undefined>, switched: ProfileSwitch[]) {
    const profiles = servers.map((server, index) => readModelProfile(`p${index}`, { base_url: server.baseUrl, model: 'scripted-model', retry: { max_attempts: 1 } }));
    return new FallbackModel(
      await Promise.all(profiles.map(async (profile, index) => {
        const client = new ModelClient(await resolveModelConnection(profile, {}));
        return { name: profile.name, contextWindow: windows[index], model: async () => client };
      })),
      { cooldownMs: 60_000, onSwitch: (change) => switched.push(change) },
    );
  }

  it('sends a conversation still too long after compaction to the first fallback with a larger window', async () => {
    const tooLong: ScriptedTurn = { fault: { kind: 'status', status: 400, code: 'context_length_exceeded', message: "This model's maximum context length is 8192 tokens" } };
    const servers = await Promise.all([
      startScriptedModelServer({ turns: [tooLong, tooLong] }),
      startScriptedModelServer({ turns: [terminate()] }),
      startScriptedModelServer({ turns: [terminate('large')] }),
    ]);
    try {
      const switched: ProfileSwitch[] = [];
      const chain = await chainOf(servers, [8192, 4096, 128_000], switched);
      const messages = [{ role: 'user' as const, content: 'hello' }];
      // Before compaction the loop compacts first: the error comes back.
      const first = await chain.complete({ messages }).catch((error: unknown) => error);
      expect(ProviderError.isInstance(first) && first.kind).toBe('context_too_long');
      expect(switched).toEqual([]);
      const reply = await chain.complete({ messages, compacted: true });
      expect(reply.profile).toBe('p2');
      expect(switched).toEqual([{ from: 'p0', to: 'p2', reason: expect.stringContaining('context_too_long') }]);
      expect(chats(servers[1])).toHaveLength(0);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  it('moves on after a timeout, and gives the last error when the chain runs out', async () => {
    const servers = await Promise.all([
      startScriptedModelServer({ turns: [{ fault: { kind: 'drop-connection' } }] }),
      startScriptedModelServer({ turns: [{ fault: { kind: 'status', status: 500 } }] }),
    ]);
    try {
      const switched: ProfileSwitch[] = [];
      const chain = await chainOf(servers, [undefined, undefined], switched);
      const failure = await chain.complete({ messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error);
      expect(ProviderError.isInstance(failure) && failure.kind).toBe('server_error');
      expect(switched.map((change) => change.to)).toEqual(['p1']);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});
