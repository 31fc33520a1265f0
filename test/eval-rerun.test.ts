/**
 * Running an eval again, end to end: the cache of replies (free reruns that keep k samples), a
 * recorded eval scored again offline with a changed scorer, resume after a kill, the baseline
 * gate naming the rows that got worse, and the reports (JUnit per row and model, the HTML page).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './support/run-cli.js';
import { chatRequests, spawnCli, startBatchModel, taskName, waitFor } from './support/batch-fixture.js';
import { writeBatchFixture } from './support/batch-fixture.js';
import type { ScriptedModelServer, ScriptedTurn } from './support/scripted-model-server.js';

const environment = (server: ScriptedModelServer) => ({ OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' });
const say = (message: string): ScriptedTurn => ({ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message } }] });

function evalFixture(rows: number, scorers: string[]): string {
  const fixture = writeBatchFixture({ items: 1 });
  writeEvalFile(fixture, rows, scorers);
  return fixture;
}

function writeEvalFile(fixture: string, rows: number, scorers: string[]): void {
  const rowLines = Array.from({ length: rows }, (_, index) => [`    - id: p${index}`, `      parameters: { name: person-${index} }`, `      expected: hello person-${index}`].join('\n'));
  writeFileSync(join(fixture, 'greet.eval.yaml'), ['version: 1', 'name: greet', 'recipe: recipe.yaml', 'dataset:', '  rows:', ...rowLines, 'scorers:', ...scorers.map((scorer) => `  - ${scorer}`), ''].join('\n'));
}

function evalFolders(fixture: string): string[] {
  const root = join(fixture, '.manus', 'evals');
  // Ids made in the same second differ only in their random ends: order by when each eval was made.
  const folders = existsSync(root) ? readdirSync(root).map((name) => join(root, name)) : [];
  const made = (folder: string) => Date.parse(JSON.parse(readFileSync(join(folder, 'eval.json'), 'utf8')).createdAt);
  return folders.sort((left, right) => made(left) - made(right));
}

const readEval = (folder: string) => JSON.parse(readFileSync(join(folder, 'eval.json'), 'utf8'));

async function withModel<T>(options: Parameters<typeof startBatchModel>[0], body: (server: ScriptedModelServer) => Promise<T>): Promise<T> {
  const server = await startBatchModel(options);
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

const equalsScorer = 'type: equals\n    value: "{{expected}}"';

describe('manus eval, run again', () => {
  it('--cache: a rerun with unchanged prompts asks no model, and k repeats stay k samples', async () => {
    const fixture = evalFixture(2, [equalsScorer]);
    await withModel({ steps: 1 }, async (server) => {
      const first = await runCli(['eval', 'greet.eval.yaml', '--ci', '--cache', '--repeat', '2'], { cwd: fixture, env: environment(server) });
      expect(first.exitCode).toBe(0);
      // 2 rows × 2 repeats × 2 replies: each repeat asked the model itself.
      expect(chatRequests(server)).toHaveLength(8);
      expect(readEval(evalFolders(fixture)[0]).cache).toEqual({ hits: 0, misses: 8 });
      const second = await runCli(['eval', 'greet.eval.yaml', '--ci', '--cache', '--repeat', '2'], { cwd: fixture, env: environment(server) });
      expect(second.exitCode).toBe(0);
      expect(chatRequests(server)).toHaveLength(8);
      const rerun = readEval(evalFolders(fixture)[1]);
      expect(rerun.cache).toEqual({ hits: 8, misses: 0 });
      expect(rerun.summary[0]).toMatchObject({ runs: 4, passed: 4 });
      expect(second.stdout).toContain('cache: 8 replies reused, 0 asked');
      // A third repeat is a new sample: only it asks the model.
      const third = await runCli(['eval', 'greet.eval.yaml', '--ci', '--cache', '--repeat', '3'], { cwd: fixture, env: environment(server) });
      expect(third.exitCode).toBe(0);
      expect(chatRequests(server)).toHaveLength(12);
      expect(existsSync(join(fixture, '.manus', 'eval-cache'))).toBe(true);
    });
  });

  it('--replay scores a recorded eval again with a changed scorer, with no model at all', async () => {
    const fixture = evalFixture(3, [equalsScorer]);
    await withModel({ steps: 1, override: (name, step) => (name === 'person-2' && step === 1 ? say('Hello PERSON-2!') : undefined) }, async (server) => {
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci'], { cwd: fixture, env: environment(server) });
      expect(result.exitCode).toBe(0);
    });
    const [recorded] = evalFolders(fixture);
    expect(readEval(recorded).summary[0].passed).toBe(2);
    // A looser scorer, scored from the recording: the server is gone, no model is configured.
    writeEvalFile(fixture, 3, ['type: includes\n    value: "{{expected}}"', 'type: tool_not_called\n    tool: wait']);
    const replayed = await runCli(['eval', 'greet.eval.yaml', '--ci', '--replay', readEval(recorded).id, '--min-score', '1'], { cwd: fixture, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
    expect(replayed.stderr).toContain('no model asked');
    expect(replayed.exitCode).toBe(0);
    const again = readEval(evalFolders(fixture)[1]);
    expect(again).toMatchObject({ status: 'replayed', summary: [{ passed: 3, meanScore: 1 }] });
    expect(again.runsFrom).toContain(readEval(recorded).id);
    expect(again.items.find((item: any) => item.row === 'p2').scores[0]).toMatchObject({ type: 'includes', passed: true });
  });

  it('resume after a kill runs only the runs that had not ended', async () => {
    const fixture = evalFixture(4, [equalsScorer]);
    await withModel({ steps: 1, delayMs: 50, override: (name, step) => (name >= 'person-2' && step === 1 ? { delayMs: 30_000, content: 'never arrives' } : undefined) }, async (server) => {
      const running = spawnCli(['eval', 'greet.eval.yaml', '--ci', '--concurrency', '4'], { cwd: fixture, env: environment(server) });
      await waitFor(() => (running.stderr().match(/ success /g) ?? []).length >= 2 && chatRequests(server).filter((request) => taskName(request) >= 'person-2').length >= 4, 20_000, 'two runs done and two waiting');
      running.child.kill('SIGKILL');
      await running.closed;
    });
    const [folder] = evalFolders(fixture);
    const id = readEval(folder).id;
    await withModel({ steps: 1 }, async (server) => {
      const resumed = await runCli(['eval', 'resume', id, '--ci'], { cwd: fixture, env: environment(server) });
      expect(resumed.stderr).toContain('2 of 4 run(s) to go');
      expect(resumed.exitCode).toBe(0);
      expect(new Set(chatRequests(server).map(taskName))).toEqual(new Set(['person-2', 'person-3']));
      const record = readEval(folder);
      expect(record).toMatchObject({ status: 'completed', summary: [{ runs: 4, passed: 4 }] });
      const nothing = await runCli(['eval', 'resume', id, '--ci'], { cwd: fixture, env: environment(server) });
      expect(nothing.exitCode).toBe(2);
      expect(nothing.stderr).toContain('nothing to resume');
    });
  });

  it('--baseline fails with exit 1 when the score fell beyond the interval, naming the rows; writes JUnit and the page', async () => {
    const fixture = evalFixture(12, [equalsScorer]);
    await withModel({ steps: 1 }, async (server) => {
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--report', 'before'], { cwd: fixture, env: environment(server) });
      expect(result.exitCode).toBe(0);
    });
    // The same eval.json is the next baseline.
    const baseline = join(fixture, 'before', 'eval.json');
    expect(readEval(join(fixture, 'before')).summary[0].meanScore).toBe(1);
    const worse = new Set(['person-1', 'person-4', 'person-7', 'person-9', 'person-10', 'person-11']);
    await withModel({ steps: 1, override: (name, step) => (worse.has(name) && step === 1 ? say('wrong') : undefined) }, async (server) => {
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--baseline', baseline, '--report', 'after'], { cwd: fixture, env: environment(server) });
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toMatch(/gate failed: baseline: default: mean score fell from 1\.000 to 0\.500 .*worse rows: p1, p4, p7, p9, p10, p11/);
      const record = readEval(join(fixture, 'after'));
      expect(record.baseline.models[0].comparison).toMatchObject({ pairs: 12, newlyFailed: 6, newlyPassed: 0, worse: true });
      expect(record.baseline.models[0].comparison.mcnemarP).toBeCloseTo(2 / 64, 6);
      const junit = readFileSync(join(fixture, 'after', 'manus-junit.xml'), 'utf8');
      expect(junit.match(/<testcase /g)).toHaveLength(13);
      expect(junit).toMatch(/<testcase name="greet p1 \[default\]"[^>]*>\s*<failure message="1 of 1 run\(s\) did not pass: equals: expected &quot;hello person-1&quot;, got &quot;wrong&quot;"/);
      expect(junit).toMatch(/<testcase name="gate baseline \[default\]"[^>]*>\s*<failure/);
      const page = readFileSync(join(fixture, 'after', 'manus-report.html'), 'utf8');
      expect(page).toContain('Against the baseline');
      expect(page).toContain('<svg');
      const link = /<td class="cell none"[^>]*>0\.00 0\/1<br><a href="(manus-report-runs\/[^"]+\.html)"/.exec(page);
      expect(link).not.toBeNull();
      expect(readFileSync(join(fixture, 'after', link![1]), 'utf8')).toContain('wrong');
    });
    // A small drop on few rows is within what chance explains: the gate passes and says so.
    writeEvalFile(fixture, 12, [equalsScorer]);
    await withModel({ steps: 1, override: (name, step) => (name === 'person-5' && step === 1 ? say('wrong') : undefined) }, async (server) => {
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--baseline', baseline], { cwd: fixture, env: environment(server) });
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toMatch(/ok baseline: default: .*within what chance explains; rows lower: p5/);
    });
  });
});
