/**
 * `manus eval` end to end: the built CLI against the scripted model server. A recipe that greets
 * a name; rows whose expected answer is "hello <name>"; the scripted model answers each request
 * from the request itself, so runs at once keep their own conversations.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './support/run-cli.js';
import { chatRequests, startBatchModel, taskName, writeBatchFixture } from './support/batch-fixture.js';
import type { ScriptedModelServer, ScriptedTurn } from './support/scripted-model-server.js';

const environment = (server: ScriptedModelServer) => ({ OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key-ffff0000', MANUS_MODEL: 'scripted-model' });

function evalFixture(rows: number, scorers: string[], extra = ''): string {
  const fixture = writeBatchFixture({ items: 1 });
  const rowLines = Array.from({ length: rows }, (_, index) => [`    - id: p${index}`, `      parameters: { name: person-${index} }`, `      expected: hello person-${index}`].join('\n'));
  writeFileSync(join(fixture, 'greet.eval.yaml'), ['version: 1', 'name: greet', 'recipe: recipe.yaml', 'dataset:', '  rows:', ...rowLines, 'scorers:', ...scorers.map((scorer) => `  - ${scorer}`), extra, ''].join('\n'));
  return fixture;
}

function evalFolders(fixture: string): string[] {
  const root = join(fixture, '.manus', 'evals');
  // Ids made in the same second differ only in their random ends: order by when each eval was made.
  const folders = existsSync(root) ? readdirSync(root).map((name) => join(root, name)) : [];
  const made = (folder: string) => Date.parse(JSON.parse(readFileSync(join(folder, 'eval.json'), 'utf8')).createdAt);
  return folders.sort((left, right) => made(left) - made(right));
}

function readEval(folder: string): Record<string, any> {
  return JSON.parse(readFileSync(join(folder, 'eval.json'), 'utf8'));
}

async function withModel<T>(override: (name: string, step: number, model: string) => ScriptedTurn | undefined, body: (server: ScriptedModelServer) => Promise<T>): Promise<T> {
  const server = await startBatchModel({ steps: 1, override: (name, step, request) => override(name, step, String(request.body.model)) });
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

const say = (message: string): ScriptedTurn => ({ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message } }] });

describe('manus eval', () => {
  it('runs each row as a batch item, scores it, writes eval.json and gates on --min-score', async () => {
    const fixture = evalFixture(5, ['type: equals\n    value: "{{expected}}"', 'type: tool_called\n    tool: echo', 'type: max_steps\n    limit: 5']);
    await withModel((name, step) => (name === 'person-3' && step === 1 ? say('goodbye') : undefined), async (server) => {
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--concurrency', '3'], { cwd: fixture, env: environment(server) });
      expect(result.stderr).toContain("'greet' on default, 5 row(s) × 1 repeat(s)");
      expect(result.exitCode).toBe(0);
      const [folder] = evalFolders(fixture);
      const record = readEval(folder);
      expect(record).toMatchObject({ version: 1, name: 'greet', models: ['default'], repeat: 1, rows: ['p0', 'p1', 'p2', 'p3', 'p4'], status: 'completed', exitCode: 0 });
      expect(record.items).toHaveLength(5);
      const third = record.items.find((item: any) => item.row === 'p3');
      expect(third).toMatchObject({ passed: false, answer: 'goodbye' });
      expect(third.scores.find((score: any) => score.type === 'equals')).toMatchObject({ score: 0, passed: false, reason: 'expected "hello person-3", got "goodbye"' });
      expect(third.scores.find((score: any) => score.type === 'tool_called')).toMatchObject({ score: 1, reason: 'echo was called 1 time(s)' });
      const first = record.items.find((item: any) => item.row === 'p0');
      expect(first.scores.map((score: any) => score.passed)).toEqual([true, true, true]);
      expect(first.runDirectory).toMatch(/^runs\//);
      expect(existsSync(join(folder, first.runDirectory, 'events.jsonl'))).toBe(true);
      // 4 rows pass; row p3 scores 2 of 3.
      expect(record.summary[0]).toMatchObject({ model: 'default', runs: 5, passed: 4, passRate: 0.8 });
      expect(record.summary[0].meanScore).toBeCloseTo((4 + 2 / 3) / 5, 6);
      expect(record.summary[0].passRateInterval.low).toBeLessThan(0.8);
      expect(record.summary[0].passRateInterval.high).toBeGreaterThan(0.8);
      expect(record.summary[0].totalTokens).toBeGreaterThan(0);
      // The table: rows by models, then the summary line.
      expect(result.stdout).toMatch(/^p3\s+0\.67 FAIL$/m);
      expect(result.stdout).toMatch(/^p0\s+1\.00 pass$/m);
      expect(result.stdout).toMatch(/^default: mean score 0\.933 \[/m);
      // No secret reaches eval.json.
      expect(readFileSync(join(folder, 'eval.json'), 'utf8')).not.toContain('test-key-ffff0000');

      const gated = await runCli(['eval', 'greet.eval.yaml', '--ci', '--min-score', '0.95'], { cwd: fixture, env: environment(server) });
      expect(gated.exitCode).toBe(1);
      expect(gated.stderr).toContain('gate failed: min-score: default: mean score 0.933 is below 0.95');
    });
  });

  it('--models runs the matrix, --repeat k gives pass@k (any of k passed) and pass^k (all of k passed)', async () => {
    const fixture = evalFixture(3, ['type: equals\n    value: "{{expected}}"']);
    let cheapCalls = 0;
    await withModel((name, step, model) => {
      if (model !== 'cheap' || step !== 1) return undefined;
      // The cheap model gets person-1 right only on its first repeat: 1 of 3 final answers for that row.
      if (name === 'person-1') return cheapCalls++ === 0 ? undefined : say('no idea');
      return name === 'person-2' ? say('no idea') : undefined;
    }, async (server) => {
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--models', 'good,cheap', '--repeat', '3', '--concurrency', '1'], { cwd: fixture, env: environment(server) });
      expect(result.exitCode).toBe(0);
      const record = readEval(evalFolders(fixture)[0]);
      expect(record.models).toEqual(['good', 'cheap']);
      expect(record.items).toHaveLength(18);
      const models = new Set(chatRequests(server).map((request) => request.body.model));
      expect([...models].sort()).toEqual(['cheap', 'good']);
      const [good, cheap] = record.summary;
      expect(good).toMatchObject({ model: 'good', runs: 9, passed: 9, anyOfKPassed: 1, allOfKPassed: 1, meanScore: 1 });
      // Rows: p0 3/3, p1 1/3, p2 0/3.
      expect(cheap).toMatchObject({ model: 'cheap', runs: 9, passed: 4 });
      expect(cheap.anyOfKPassed).toBeCloseTo(2 / 3, 6);
      expect(cheap.allOfKPassed).toBeCloseTo(1 / 3, 6);
      expect(cheap.meanScore).toBeCloseTo((1 + 1 / 3 + 0) / 3, 6);
      expect(result.stdout).toMatch(/any of 3 passed \(pass@3\) 66\.7%, all of 3 passed \(pass\^3\) 33\.3%/);
      expect(result.stdout).toMatch(/^p1\s+1\.00 3\/3\s+0\.33 1\/3$/m);
    });
  });

  it('exits 3 when the eval\'s budget runs out and 4 when the provider keeps failing, as batches do', async () => {
    const fixture = evalFixture(6, ['type: equals\n    value: "{{expected}}"']);
    await withModel(() => undefined, async (server) => {
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--concurrency', '1', '--max-tokens', '150'], { cwd: fixture, env: environment(server) });
      expect(result.exitCode).toBe(3);
      const record = readEval(evalFolders(fixture)[0]);
      expect(record).toMatchObject({ status: 'budget-exhausted', exitCode: 3 });
      expect(record.items.filter((item: any) => item.status === 'not-run').length).toBeGreaterThan(0);
    });
    const failing = await startBatchModel({ steps: 1, override: () => ({ fault: { kind: 'status', status: 503 } }) });
    try {
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci'], { cwd: fixture, env: { ...environment(failing), MANUS_BATCH_RETRY_DELAY_MS: '0' } });
      expect(result.exitCode).toBe(4);
      const record = readEval(evalFolders(fixture)[1]);
      expect(record.items.map((item: any) => item.status)).toEqual(Array(6).fill('provider-failed'));
    } finally {
      await failing.close();
    }
  });

  it('reports a bad eval file at file:line:column with a did-you-mean, before any model call', async () => {
    const fixture = evalFixture(2, ['type: equals\n    vlaue: "{{expected}}"']);
    const result = await runCli(['eval', 'greet.eval.yaml', '--ci'], { cwd: fixture, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'k' } });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/greet\.eval\.yaml:\d+:\d+: error: unknown key 'vlaue' in 'scorers\.0'.*did you mean 'value'/);
    const validated = await runCli(['validate', 'greet.eval.yaml'], { cwd: fixture });
    expect(validated.exitCode).toBe(2);
    expect(validated.stderr).toMatch(/greet\.eval\.yaml:\d+:\d+: error: unknown key 'vlaue' in 'scorers\.0'.*did you mean 'value'/);
    const badPattern = evalFixture(1, ['type: regex\n    pattern: "(unclosed"']);
    const second = await runCli(['eval', 'greet.eval.yaml', '--ci'], { cwd: badPattern, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'k' } });
    expect(second.exitCode).toBe(2);
    expect(second.stderr).toMatch(/greet\.eval\.yaml:\d+:\d+: error: not a valid regular expression/);
    const misplaced = evalFixture(1, ['type: equals\n    value: "{{expected}}"\n    tolerance: 0.1']);
    const fourth = await runCli(['eval', 'greet.eval.yaml', '--ci'], { cwd: misplaced, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'k' } });
    expect(fourth.exitCode).toBe(2);
    expect(fourth.stderr).toMatch(/greet\.eval\.yaml:\d+:5: error: an? equals scorer does not read tolerance: it belongs to number/);
    const badParameter = evalFixture(1, ['type: checks']);
    writeFileSync(join(badParameter, 'greet.eval.yaml'), readFileSync(join(badParameter, 'greet.eval.yaml'), 'utf8').replace('{ name: person-0 }', '{ nmae: person-0 }'));
    const third = await runCli(['eval', 'greet.eval.yaml', '--ci'], { cwd: badParameter, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'k' } });
    expect(third.exitCode).toBe(2);
    expect(third.stderr).toContain("row p0: the recipe loop-test has no parameter 'nmae' (did you mean 'name'?)");
    expect(third.stderr).toContain("row p0: the required parameter 'name' is missing");
    expect(evalFolders(fixture)).toHaveLength(0);
  });
});
