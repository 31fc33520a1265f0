import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { costOf } from '../runtime/services/model/pricing.js';
import { tablePrices } from '../runtime/services/model/price-table.js';
import { usageFromProvider } from '../runtime/contract/token-usage.js';
import { readEvents, runCli } from './support/run-cli.js';
import { runScripted, terminate, writeLoopFixture } from './support/loop-fixture.js';
import { startScriptedModelServer } from './support/scripted-model-server.js';

describe('usage as providers report it', () => {
  it('reads cached prompt tokens from OpenAI, DeepSeek and Anthropic-compatible usage', () => {
    expect(usageFromProvider({ prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050, prompt_tokens_details: { cached_tokens: 600 } }))
      .toEqual({ promptTokens: 1000, completionTokens: 50, totalTokens: 1050, cachedPromptTokens: 600 });
    expect(usageFromProvider({ prompt_tokens: 1000, completion_tokens: 50, prompt_cache_hit_tokens: 400 }))
      .toEqual({ promptTokens: 1000, completionTokens: 50, totalTokens: 1050, cachedPromptTokens: 400 });
    expect(usageFromProvider({ prompt_tokens: 1000, completion_tokens: 50, cache_read_input_tokens: 900 }))
      .toEqual({ promptTokens: 1000, completionTokens: 50, totalTokens: 1050, cachedPromptTokens: 900 });
    // A details object with a null count, as some gateways send, and a count above the prompt.
    expect(usageFromProvider({ prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: null } })).toEqual({ promptTokens: 10, completionTokens: 1, totalTokens: 11 });
    expect(usageFromProvider({ prompt_tokens: 10, completion_tokens: 1, cache_read_input_tokens: 50 })?.cachedPromptTokens).toBe(10);
    // A gateway sending two names, one of them 0, and cache writes beside reads.
    expect(usageFromProvider({ prompt_tokens: 1000, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 0 }, cache_read_input_tokens: 700, cache_creation_input_tokens: 200 }))
      .toMatchObject({ cachedPromptTokens: 700, cacheWritePromptTokens: 200 });
  });

  it('charges cached prompt tokens at the cached price, and at the input price when none is given', () => {
    const usage = { promptTokens: 1_000_000, completionTokens: 1_000_000, totalTokens: 2_000_000, cachedPromptTokens: 500_000 };
    expect(costOf(usage, { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5 })).toBeCloseTo(1 + 0.25 + 8, 10);
    expect(costOf(usage, { inputPerMillion: 2, outputPerMillion: 8 })).toBeCloseTo(2 + 8, 10);
    const written = { promptTokens: 1_000_000, completionTokens: 0, totalTokens: 1_000_000, cacheWritePromptTokens: 1_000_000 };
    expect(costOf(written, { inputPerMillion: 3, outputPerMillion: 15, cacheWriteInputPerMillion: 3.75 })).toBeCloseTo(3.75, 10);
  });
});

describe('the price table', () => {
  it('prices a model it knows, with its cached input price, by endpoint or by model id alone', async () => {
    const openai = await tablePrices({ model: 'gpt-4o-mini', baseUrl: 'https://api.openai.com/v1' });
    expect(openai).toMatchObject({ inputPerMillion: expect.closeTo(0.15, 6), outputPerMillion: expect.closeTo(0.6, 6), cachedInputPerMillion: expect.closeTo(0.075, 6) });
    // Anthropic charges cache writes above input.
    const anthropic = await tablePrices({ model: 'claude-3-5-sonnet-latest', baseUrl: 'https://api.anthropic.com/v1' });
    expect(anthropic).toMatchObject({ inputPerMillion: expect.closeTo(3, 6), cachedInputPerMillion: expect.closeTo(0.3, 6), cacheWriteInputPerMillion: expect.closeTo(3.75, 6) });
    // A gateway on the user's machine serving a known model id.
    expect(await tablePrices({ model: 'gpt-4o-mini', baseUrl: 'http://127.0.0.1:4000/v1' })).toEqual(openai);
    const deepseek = await tablePrices({ model: 'deepseek-chat', baseUrl: 'https://api.deepseek.com/v1' });
    expect(deepseek?.cachedInputPerMillion).toBeLessThan(deepseek!.inputPerMillion);
  });

  it('knows nothing of a local model', async () => {
    expect(await tablePrices({ model: 'llama3.1:8b', baseUrl: 'http://127.0.0.1:11434/v1' })).toBeUndefined();
    expect(await tablePrices({ model: 'scripted-model' })).toBeUndefined();
  });
});

describe('cost of a run', () => {
  const usage = (prompt: number, completion: number, cached: number) => ({ prompt_tokens: prompt, completion_tokens: completion, prompt_tokens_details: { cached_tokens: cached } });

  it('is priced from the table for a known model with no configuration, cached tokens at their price', async () => {
    const run = await runScripted([
      { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }], usage: usage(100_000, 1_000, 0) },
      { ...terminate(), usage: usage(100_000, 1_000, 80_000) },
    ], { env: { MANUS_MODEL: 'gpt-4o-mini' }, args: ['--report', 'report'] });
    expect(run.exitCode, run.stderr).toBe(0);
    // gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per million tokens.
    const expected = (120_000 * 0.15 + 80_000 * 0.075 + 2_000 * 0.6) / 1_000_000;
    expect(run.json.cost).toBeCloseTo(expected, 8);
    expect(run.json.usage).toMatchObject({ promptTokens: 200_000, cachedPromptTokens: 80_000 });

    const runDirectory = run.json.runDirectory as string;
    const end = readEvents(runDirectory).find((event) => event.type === 'run-end')!;
    expect(end.cost).toBeCloseTo(expected, 8);
    const shown = await runCli(['runs', 'show', run.json.runId], { cwd: run.fixture });
    expect(shown.stdout).toContain('40% of prompt tokens cached');
    expect(shown.stdout).toContain(`cost: $${expected.toFixed(4)}`);
    const html = readFileSync(join(run.fixture, 'report', 'manus-report.html'), 'utf8');
    expect(html).toContain('40% of prompt tokens cached');
    expect(html).toContain(`$${expected.toFixed(4)}`);
  });

  it('takes the profile\'s own price over the table\'s, with its cached price', async () => {
    const run = await runScripted([{ ...terminate(), usage: usage(1_000_000, 0, 500_000) }], {
      env: { MANUS_MODEL: 'gpt-4o-mini' },
      profile: 'price: { input_per_million: 4, output_per_million: 16, cached_input_per_million: 1 }',
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.json.cost).toBeCloseTo(2 + 0.5, 8);
  });

  it('is unknown, never 0, for a model no table knows, and says so at the end', async () => {
    const run = await runScripted([{ ...terminate(), usage: usage(1000, 10, 0) }]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.json.cost).toBeUndefined();
    const shown = await runCli(['runs', 'show', run.json.runId], { cwd: run.fixture });
    expect(shown.stdout).toContain('cost: unknown');
  });
});

describe('a cost budget', () => {
  it('is refused at validation for a model with no known price, naming the profile', async () => {
    const fixture = writeLoopFixture({ recipeExtra: 'budgets: { cost: 1 }', profile: 'model: my-local-model' });
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: fixture, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("model 'my-local-model' has no known price: add price: { input_per_million, output_per_million } to the model profile 'default'");
  });

  it('is kept for a model the table knows, with no price configured', async () => {
    const fixture = writeLoopFixture({ recipeExtra: 'budgets: { cost: 1 }', profile: 'model: gpt-4o-mini' });
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: fixture, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
    expect(result.exitCode, result.stderr).toBe(0);
  });

  it('is refused before the first request when the model is named only by the endpoint', async () => {
    const server = await startScriptedModelServer({ turns: [terminate()] });
    try {
      const fixture = writeLoopFixture({ recipeExtra: 'budgets: { cost: 1 }' });
      // No model anywhere: the runtime asks the endpoint's /models, which names the scripted model.
      const result = await runCli(['run', 'recipe.yaml'], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl } });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain("model 'scripted-model' has no known price");
      expect(server.requests.filter((request) => request.path.endsWith('/chat/completions'))).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});

describe('the prices a run looked up', () => {
  it('are remembered in the user\'s cache folder, so a later run of the model needs no table', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'manus-price-cache-'));
    const server = await startScriptedModelServer({ turns: [terminate(), { ...terminate(), usage: { prompt_tokens: 1, completion_tokens: 0 } }] });
    try {
      const fixture = writeLoopFixture();
      const run = () => runCli(['run', 'recipe.yaml', '--json'], {
        cwd: fixture,
        env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'gpt-4o-mini', MANUS_CACHE_DIR: cache },
      });
      const first = await run();
      expect(first.exitCode, first.stderr).toBe(0);
      const [file] = readdirSync(cache).filter((name) => name.startsWith('prices-'));
      const key = '127.0.0.1 gpt-4o-mini';
      expect(JSON.parse(readFileSync(join(cache, file), 'utf8'))[key]).toMatchObject({ inputPerMillion: expect.closeTo(0.15, 6) });
      // What the file says is what a later run charges: the table is not asked again.
      writeFileSync(join(cache, file), JSON.stringify({ [key]: { inputPerMillion: 1_000_000, outputPerMillion: 0 } }));
      const second = await run();
      expect(second.json.cost).toBeCloseTo(1, 8);
    } finally {
      await server.close();
    }
  });
});
