import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBatchProgress } from '../cli/batch-progress.js';
import { exitCodeForRun } from '../cli/exit-codes.js';
import { BatchBudget } from '../runtime/applications/batch/batch-budget.js';
import { EmbeddedPool } from '../runtime/applications/batch/embedded-pool.js';
import { processStartTime } from '../runtime/services/sandbox/process-records.js';
import { processIsGone } from './support/processes.js';
import { terminate } from './support/loop-fixture.js';
import { runCli } from './support/run-cli.js';
import { batchEnvironment, batchFolder, chatRequests, readBatch, spawnCli, startBatchModel, taskName, waitFor, writeBatchFixture } from './support/batch-fixture.js';
import type { RecordedChatRequest, ScriptedModelServer } from './support/scripted-model-server.js';

/** The most chat requests the server was answering at one moment. */
function peakConcurrency(requests: RecordedChatRequest[]): number {
  const moments = requests.flatMap((request) => [{ time: request.receivedAt, change: 1 }, { time: request.repliedAt ?? Infinity, change: -1 }]);
  moments.sort((left, right) => left.time - right.time || left.change - right.change);
  let open = 0;
  let peak = 0;
  for (const moment of moments) {
    open += moment.change;
    peak = Math.max(peak, open);
  }
  return peak;
}

async function withModel<T>(options: Parameters<typeof startBatchModel>[0], body: (server: ScriptedModelServer) => Promise<T>): Promise<T> {
  const server = await startBatchModel(options);
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

describe('manus batch in one process', () => {
  it('runs the recipe once per item and records each outcome, the table, the JSON and the reports', async () => {
    const fixture = writeBatchFixture({ items: 5, recipeExtra: 'checks:\n  - answer_matches: "hello person-[0-9]"' });
    await withModel({
      steps: 1,
      // Item 3 fails its check: its answer does not match.
      override: (name, step) => (name === 'person-3' && step === 1 ? { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'goodbye' } }] } : undefined),
    }, async (server) => {
      const result = await runCli(['batch', 'recipe.yaml', '--inputs', 'items.csv', '--concurrency', '2', '--ci', '--report', 'reports'], { cwd: fixture, env: batchEnvironment(server) });
      expect(result.exitCode).toBe(1);
      const folder = batchFolder(fixture);
      const { record, latest } = readBatch(folder);
      expect(record).toMatchObject({
        version: 1,
        recipe: { name: 'loop-test', file: 'recipe.yaml' },
        inputs: { file: 'items.csv', count: 5 },
        concurrency: 2,
        status: 'failure',
        exitCode: 1,
        totals: { items: 5, succeeded: 4, failed: 1, running: 0, pending: 0 },
      });
      expect(record.recipe.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(record.finishedAt).toBeDefined();
      expect(record.queue).toBeUndefined();
      expect([...latest.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
      expect(latest.get(0)).toMatchObject({ index: 0, parameters: { name: 'person-0' }, status: 'success', exitCode: 0, answer: 'hello person-0', attempts: 1 });
      expect(latest.get(3)).toMatchObject({ status: 'checks-failed', exitCode: 1, answer: 'goodbye' });
      expect(latest.get(3)!.checks[0]).toMatchObject({ kind: 'answer_matches', passed: false });
      const item = latest.get(1)!;
      expect(item.usage.totalTokens).toBeGreaterThan(0);
      expect(item.events).toEqual({ stored: 'local', path: join(item.runDirectory, 'events.jsonl') });
      expect(readFileSync(join(folder, item.events.path), 'utf8')).toContain('"run-end"');
      expect(record.totals.totalTokens).toBe([...latest.values()].reduce((sum, line) => sum + line.usage.totalTokens, 0));

      // The table, with each item's own exit code and input; items are numbered from 1, as the inputs' lines are.
      expect(result.stdout).toMatch(/^#\s+input\s+status\s+exit/m);
      expect(result.stdout).toMatch(/^4\s+name=person-3\s+checks-failed\s+1\s+/m);
      expect(result.stdout).toMatch(/^1\s+name=person-0\s+success\s+0\s+/m);
      expect(result.stdout).not.toMatch(/^0\s/m);
      const shown = await runCli(['batch', 'show', record.id.slice(0, 15), '--json'], { cwd: fixture });
      expect(shown.exitCode).toBe(0);
      expect(shown.json.batch).toMatchObject({ id: record.id, status: 'failure' });
      expect(shown.json.batch.settings).toBeUndefined();
      expect(shown.json.items.map((line: { index: number }) => line.index)).toEqual([0, 1, 2, 3, 4]);
      expect(shown.json.items.map((line: { number: number }) => line.number)).toEqual([1, 2, 3, 4, 5]);
      const table = await runCli(['batch', 'show', record.id], { cwd: fixture });
      expect(table.stdout).toMatch(/^4\s+name=person-3\s+checks-failed\s+1\s+/m);

      const report = JSON.parse(readFileSync(join(fixture, 'reports', 'manus-batch-report.json'), 'utf8'));
      expect(report).toMatchObject({ version: 1, batch: { id: record.id, exitCode: 1 } });
      expect(report.items).toHaveLength(5);
      const junit = readFileSync(join(fixture, 'reports', 'manus-junit.xml'), 'utf8');
      expect(junit.match(/<testcase /g)).toHaveLength(5);
      expect(junit).toContain('tests="5" failures="1"');
      expect(junit).toMatch(/<testcase name="item 4 \(name=person-3\)"[^>]*>\s*<failure message="checks-failed: goodbye"/);
      // The same number in the progress line, the batch's page and the item's own page.
      expect(result.stderr).toMatch(/^item 4\/5 checks-failed \(exit 1\)/m);
      expect(junit).toContain('check failed: the answer matches');
      // The batch's page, and a page per item beside it, from the same folder.
      const page = readFileSync(join(fixture, 'reports', 'manus-report.html'), 'utf8');
      expect(page).toContain(record.id);
      expect(page).toContain('checks-failed');
      expect(page).toMatch(/<tr data-status="checks-failed" data-item="4"><td class="number" data-value="4">4<\/td>.*?href="manus-report-items\/item-4\.html"/);
      const itemPage = readFileSync(join(fixture, 'reports', 'manus-report-items', 'item-4.html'), 'utf8');
      expect(itemPage).toContain('goodbye');
    });
  });

  it('honours the concurrency: never more items at once than asked', async () => {
    const fixture = writeBatchFixture({ items: 6 });
    await withModel({ steps: 2, delayMs: 150 }, async (server) => {
      const started = Date.now();
      const result = await runCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--concurrency', '2', '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      const elapsed = Date.now() - started;
      expect(result.exitCode).toBe(0);
      const requests = chatRequests(server);
      expect(requests).toHaveLength(18);
      expect(peakConcurrency(requests)).toBe(2);
      // Three rounds of two items, each three replies of 150 ms.
      expect(elapsed).toBeGreaterThanOrEqual(3 * 3 * 150);
    });
  });

  it('stops at the batch token budget: running items end budget-exhausted, the rest never start, exit 3', async () => {
    const fixture = writeBatchFixture({ items: 8 });
    await withModel({ steps: 6, delayMs: 40 }, async (server) => {
      const result = await runCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--concurrency', '2', '--max-tokens', '600', '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      expect(result.exitCode).toBe(3);
      const { record, latest } = readBatch(batchFolder(fixture));
      expect(record).toMatchObject({ status: 'budget-exhausted', exitCode: 3, budgets: { maxTokens: 600 } });
      const stopped = [...latest.values()].filter((line) => line.status === 'budget-exhausted');
      expect(stopped.length).toBeGreaterThanOrEqual(1);
      for (const line of stopped) expect(line.exitCode).toBe(3);
      expect(latest.size).toBeLessThanOrEqual(3);
      expect(record.totals.pending).toBe(8 - latest.size);
      const names = new Set(chatRequests(server).map(taskName));
      expect(names.size).toBe(latest.size);
      expect(result.stderr).toContain("the batch's tokens budget ran out");
    });
  });

  it('loses no finished item when killed, and resume runs only the rest, continuing interrupted runs from their events', async () => {
    const fixture = writeBatchFixture({ items: 6 });
    let runIdsBefore = new Map<number, string>();
    await withModel({ steps: 3, delayMs: 60, override: (name, step) => (name >= 'person-3' && step === 2 ? { delayMs: 30_000, content: 'never arrives' } : undefined) }, async (server) => {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--concurrency', '3', '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => (batch.stderr().match(/ success /g) ?? []).length >= 3 && chatRequests(server).filter((request) => taskName(request) >= 'person-3').length >= 9, 20_000, 'three items done and three stuck');
      batch.child.kill('SIGKILL');
      await batch.closed;
      const { record, latest } = readBatch(batchFolder(fixture));
      expect(record.status).toBe('running');
      expect([0, 1, 2].map((index) => latest.get(index)!.status)).toEqual(['success', 'success', 'success']);
      expect([3, 4, 5].map((index) => latest.get(index)!.status)).toEqual(['running', 'running', 'running']);
      runIdsBefore = new Map([3, 4, 5].map((index) => [index, latest.get(index)!.runId]));
      const shown = await runCli(['batch', 'show', record.id], { cwd: fixture });
      expect(shown.stderr).toContain('stopped without finishing');
    });
    await withModel({ steps: 3 }, async (server) => {
      const { record } = readBatch(batchFolder(fixture));
      const resumed = await runCli(['batch', 'resume', record.id, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      expect(resumed.exitCode).toBe(0);
      expect(resumed.stderr).toContain('3 of 6 item(s) to run');
      const names = new Set(chatRequests(server).map(taskName));
      expect([...names].sort()).toEqual(['person-3', 'person-4', 'person-5']);
      // Each continued from its history: two tool results already there, one more step to go.
      expect(chatRequests(server)).toHaveLength(3 * 2);
      const after = readBatch(batchFolder(fixture));
      expect(after.record).toMatchObject({ status: 'success', exitCode: 0, totals: { succeeded: 6, pending: 0 } });
      for (const index of [3, 4, 5]) expect(after.latest.get(index)).toMatchObject({ status: 'success', runId: runIdsBefore.get(index), attempts: 2 });
    });
  });

  it('stops cleanly on Ctrl-C with exit 130, and is resumable', async () => {
    const fixture = writeBatchFixture({ items: 4 });
    await withModel({ steps: 2, override: (_name, step) => (step === 1 ? { delayMs: 30_000, content: 'never arrives' } : undefined) }, async (server) => {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--concurrency', '2', '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => chatRequests(server).length >= 4, 20_000, 'two items waiting for the model');
      batch.child.kill('SIGINT');
      const { code } = await batch.closed;
      expect(code).toBe(130);
      expect(batch.stderr()).toContain('manus batch resume');
      const { record, latest } = readBatch(batchFolder(fixture));
      expect(record).toMatchObject({ status: 'interrupted', exitCode: 130, totals: { succeeded: 0, pending: 4 } });
      expect([...latest.values()].map((line) => [line.status, line.exitCode])).toEqual([['interrupted', 130], ['interrupted', 130]]);
    });
    await withModel({ steps: 2 }, async (server) => {
      const { record } = readBatch(batchFolder(fixture));
      const resumed = await runCli(['batch', 'resume', record.id, '--json'], { cwd: fixture, env: batchEnvironment(server) });
      expect(resumed.exitCode).toBe(0);
      expect(resumed.json.batch).toMatchObject({ status: 'success', totals: { succeeded: 4 } });
    });
  });

  it('refuses inputs that do not fit the recipe before any model call, naming the line', async () => {
    const fixture = writeBatchFixture({ items: 2 });
    writeFileSync(join(fixture, 'bad.jsonl'), '{"name": "a"}\n{"nmae": "b"}\n');
    await withModel({ steps: 0 }, async (server) => {
      const result = await runCli(['batch', 'recipe.yaml', '--inputs', 'bad.jsonl'], { cwd: fixture, env: batchEnvironment(server) });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain("bad.jsonl:2: the recipe loop-test has no parameter 'nmae' (did you mean 'name'?)");
      expect(result.stderr).toContain("bad.jsonl:2: the required parameter 'name' is missing");
      expect(chatRequests(server)).toHaveLength(0);
      const missing = await runCli(['batch', 'recipe.yaml'], { cwd: fixture });
      expect(missing.exitCode).toBe(2);
      expect(missing.stderr).toContain('batch needs --inputs');
    });
  });

  it('runs a recipe whose plugins are beside its folder: only a queued batch ships files, so only it keeps to the folder', async () => {
    const fixture = writeBatchFixture({ items: 2 });
    const folder = join(fixture, 'batch');
    mkdirSync(folder);
    writeFileSync(join(folder, 'item.yaml'), readFileSync(join(fixture, 'recipe.yaml'), 'utf8').replace('plugins: [./tools]', 'plugins: [../tools]'));
    renameSync(join(fixture, 'items.jsonl'), join(folder, 'items.jsonl'));
    // Item 1 fails, so that the batch has something left to resume.
    await withModel({ steps: 1, override: (name, step) => (name === 'person-1' && step === 1 ? terminate('no', 'failure') : undefined) }, async (server) => {
      const result = await runCli(['batch', 'item.yaml', '--inputs', 'items.jsonl', '--json'], { cwd: folder, env: batchEnvironment(server) });
      expect(result.exitCode, result.stderr).toBe(1);
      expect(result.json.batch).toMatchObject({ totals: { items: 2, succeeded: 1, failed: 1 } });
      const { record } = readBatch(batchFolder(folder));
      // The plugins outside the folder are part of what the batch pinned: changing them is noticed.
      writeFileSync(join(fixture, 'tools', 'test-tools.ts'), `${readFileSync(join(fixture, 'tools', 'test-tools.ts'), 'utf8')}\n// changed\n`);
      const resumed = await runCli(['batch', 'resume', record.id], { cwd: folder, env: batchEnvironment(server) });
      expect(resumed.stderr).toContain('changed since batch');
    });
    const queued = await runCli(['batch', 'item.yaml', '--inputs', 'items.jsonl', '--queue', 'redis://127.0.0.1:9/0'], { cwd: folder });
    expect(queued.exitCode).toBe(2);
    expect(queued.stderr).toMatch(/tools leads outside .*a queued batch ships/);
  });

  it("stops what a killed session of the batch left running in its runs folder once, before the first item, and says so", async () => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), 'manus-pool-leftovers-')));
    const leftover = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    leftover.unref();
    try {
      const runs = join(folder, 'runs');
      mkdirSync(join(runs, 'killed-run'), { recursive: true });
      // Written by a runtime that has ended: this pid with a start time it does not have.
      const records = join(runs, 'killed-run', 'processes.json');
      writeFileSync(records, JSON.stringify({ version: 1, runtime: { pid: process.pid, startTime: '1', host: hostname() }, commands: [{ processGroup: { pid: leftover.pid, startTime: processStartTime(leftover.pid!) } }] }));
      const notices: string[] = [];
      const pool = new EmbeddedPool({ concurrency: 2, recipeFile: 'recipe.yaml', cwd: folder, overrides: {}, runsDirectory: runs, environment: {}, retry: { retries: 0, providerRetries: 0, baseDelayMs: 0, maxDelayMs: 0 }, exitCodeFor: exitCodeForRun });
      await pool.run([], {
        signal: new AbortController().signal,
        budget: new BatchBudget({}),
        mayStart: () => true,
        started: () => undefined,
        finished: () => undefined,
        saveRecord: () => undefined,
        progressed: () => undefined,
        notice: (message) => notices.push(message),
      });
      await expect.poll(() => processIsGone(leftover.pid!), { timeout: 3000 }).toBe(true);
      expect(existsSync(records)).toBe(false);
      expect(notices).toEqual(['stopped 1 process group(s) an earlier, killed session of the batch left running']);
    } finally {
      if (!processIsGone(leftover.pid!)) process.kill(-leftover.pid!, 'SIGKILL');
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('draws one progress line in place on a terminal, with a line above it for each item that did not succeed', () => {
    let output = '';
    const progress = createBatchProgress({ write: (text) => (output += text), live: true, color: false });
    const totals = { items: 4, succeeded: 0, failed: 0, running: 2, pending: 2, promptTokens: 900, completionTokens: 100, totalTokens: 12_000, cost: 0.0123, durationMs: 1000 };
    progress.onProgress({ kind: 'item-start', index: 0, runId: 'run-0', totals });
    expect(output).toBe('\r\u001b[K[........................] 0/4 done  0 failed  2 running  12.0k tokens  $0.0123');
    const failed = { index: 1, parameters: { name: 'b' }, runId: 'run-1', status: 'stuck', exitCode: 1, answer: 'went round in circles', usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 }, durationMs: 2500, startedAt: new Date().toISOString(), attempts: 1 };
    output = '';
    progress.onProgress({ kind: 'item-end', item: failed, totals: { ...totals, failed: 1, running: 1 } });
    expect(output).toContain('item 2/4 stuck (exit 1) run run-1, 2.5 s, 15 tokens: went round in circles\n');
    expect(output).toMatch(/\[######\.{18}\] 1\/4 done  1 failed  1 running/);
    output = '';
    progress.onProgress({ kind: 'item-end', item: { ...failed, index: 2, status: 'success', exitCode: 0 }, totals: { ...totals, succeeded: 1, failed: 1, running: 0 } });
    expect(output).not.toContain('item 3/4');
    expect(output).toMatch(/2\/4 done .* ETA \d+s$/);
    output = '';
    progress.end();
    expect(output).toBe('\r\u001b[K');
  });
});
