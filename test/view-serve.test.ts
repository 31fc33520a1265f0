/**
 * `manus view --serve` from the built command: a run started while the list is open appears in
 * it, and its steps arrive on its page live, in real Chromium; requests naming another host, or
 * reaching outside the runs folder, get nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissing as isChromiumMissing } from './support/fixture-site.js';
import { keepScreenshot, useReportBrowser } from './support/report-browser.js';
import { cliEntry, makeFixture, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type ScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

const chromiumMissing = isChromiumMissing('report server');
const apiKey = 'sk-serve-profile-key-90be11';
const outsideMarker = 'OUTSIDE-THE-RUNS-FOLDER';

const agentsYaml = (baseUrl: string) => `version: 1
llm:
  default: { provider: openai-compatible, base_url: ${baseUrl}, api_key_env: SERVE_API_KEY, model: scripted-model }
`;

const recipe = `version: 1
name: slow-notes
prompt: Write notes, one at a time.
agent:
  system_prompt: You write notes.
  tools: [str_replace_editor, terminate]
  max_steps: 10
`;

const stepCount = 6;
const slowTurns = (): ScriptedTurn[] => [
  ...Array.from({ length: stepCount - 1 }, (_, index) => ({
    delayMs: 700,
    content: `Note ${index + 1}, and the key ${apiKey}.`,
    toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'create', path: `note-${index + 1}.md`, file_text: `note ${index + 1}\n` } }],
  })),
  { delayMs: 700, toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'Six notes written.' } }] },
];

let model: ScriptedModelServer;
let project: string;
let server: ChildProcess | undefined;
let origin: string;
let port: number;

function environment(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1', SERVE_API_KEY: apiKey, XDG_CONFIG_HOME: join(project, 'no-user-config') };
}

beforeAll(async () => {
  model = await startScriptedModelServer({ turns: slowTurns() });
  project = makeFixture({ 'agents.yaml': agentsYaml(model.baseUrl), 'recipe.yaml': recipe, [join('outside', 'run-x', 'events.jsonl')]: `${JSON.stringify({ type: 'run-start', time: '2026-12-01T10:00:00.000Z', runId: 'run-x', recipe: { name: outsideMarker } })}\n` });
  mkdirSync(join(project, '.manus', 'runs'), { recursive: true });
  // A link in the runs folder to a run folder elsewhere, and a batch whose item points outside.
  symlinkSync(join(project, 'outside', 'run-x'), join(project, '.manus', 'runs', 'escape'));
  // A run folder of its own whose events file is a link to a run elsewhere.
  mkdirSync(join(project, '.manus', 'runs', '20261201-100000-linked'));
  symlinkSync(join(project, 'outside', 'run-x', 'events.jsonl'), join(project, '.manus', 'runs', '20261201-100000-linked', 'events.jsonl'));
  const batch = join(project, '.manus', 'batches', 'batch-out');
  mkdirSync(batch, { recursive: true });
  writeFileSync(join(batch, 'batch.json'), JSON.stringify({ version: 1, id: 'batch-out', recipe: { name: 'outside-batch' }, status: 'success', totals: { items: 1 } }));
  writeFileSync(join(batch, 'items.jsonl'), `${JSON.stringify({ index: 0, status: 'success', answer: 'ok', runDirectory: '../../../outside/run-x', events: { stored: 'local', path: '../../../outside/run-x/events.jsonl' } })}\n`);

  server = spawn(process.execPath, [cliEntry, 'view', '--serve', '--port', '0'], { cwd: project, env: environment(), stdio: ['ignore', 'pipe', 'pipe'] });
  origin = await new Promise<string>((resolve, reject) => {
    let output = '';
    server!.stdout!.on('data', (chunk) => {
      output += chunk;
      const line = /^(http:\/\/127\.0\.0\.1:\d+)\/\n/m.exec(output);
      if (line) resolve(line[1]);
    });
    server!.on('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
  port = Number(new URL(origin).port);
}, 30_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.on('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  await model?.close();
});

/** A request sent as written: no client tidies the path or the Host header first. */
function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers } }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

const { newPage } = useReportBrowser();

describe('manus view --serve', () => {
  it('answers only requests that name loopback as their host', async () => {
    expect((await get('/')).status).toBe(200);
    expect((await get('/', { host: `localhost:${port}` })).status).toBe(200);
    const rebound = await get('/', { host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain('<table');
    expect((await get('/', { origin: 'http://attacker.example' })).status).toBe(403);
    expect((await get('/', {}, 'POST')).status).toBe(405);
  });

  it('serves nothing outside the runs folder', async () => {
    for (const path of [
      '/runs/../../../../etc/passwd',
      '/runs/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/runs/..%2f..%2f..%2f..%2fetc%2fpasswd',
      '/runs/%2e%2e%2f%2e%2e%2foutside%2frun-x',
      '/runs/escape',
      '/runs/escape/events',
      '/runs/20261201-100000-linked',
      '/runs/20261201-100000-linked/events',
      '/batches/batch-out/items/1/events',
      '/batches/..%2f..%2foutside',
      `/runs/${encodeURIComponent(join(project, 'outside', 'run-x'))}`,
      '/runs/%00',
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expect(response.body, path).not.toContain('root:');
      expect(response.body, path).not.toContain(outsideMarker);
    }
    // The batch is listed, but its item's events outside the folders are not read.
    const item = await get('/batches/batch-out/items/1');
    expect(item.status).toBe(200);
    expect(item.body).not.toContain(outsideMarker);
    expect((await get('/')).body).not.toContain(outsideMarker);
  });

  it.skipIf(chromiumMissing)(`puts a running batch's new items in its table as they come${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, async () => {
    const batch = join(project, '.manus', 'batches', 'batch-live');
    mkdirSync(batch, { recursive: true });
    const itemLine = (index: number) => `${JSON.stringify({ index, status: 'success', answer: `answer ${index + 1}`, durationMs: 1000 * (index + 1), usage: { totalTokens: 10 } })}\n`;
    writeFileSync(join(batch, 'batch.json'), JSON.stringify({ version: 1, id: 'batch-live', recipe: { name: 'live-batch' }, status: 'running', totals: { items: 2, succeeded: 1, failed: 0, running: 1 } }));
    writeFileSync(join(batch, 'items.jsonl'), itemLine(0));
    const { page, errors } = await newPage();
    await page.goto(`${origin}/batches/batch-live`);
    expect(await page.locator('#batch-items tbody tr').count()).toBe(1);
    await page.evaluate(() => ((window as { __sameDocument?: boolean }).__sameDocument = true));
    appendFileSync(join(batch, 'items.jsonl'), itemLine(1));
    writeFileSync(join(batch, 'batch.json'), JSON.stringify({ version: 1, id: 'batch-live', recipe: { name: 'live-batch' }, status: 'success', totals: { items: 2, succeeded: 2, failed: 0 } }));
    await page.locator('#batch-items tbody tr[data-item="2"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#batch-totals').textContent()).toBe('2 in all: 2 succeeded, 0 failed');
    expect(await page.evaluate(() => (window as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    await page.locator('tr[data-item="2"] a.item-report').click();
    expect(await page.locator('h1').textContent()).toContain('item 2');
    expect(errors).toEqual([]);
  }, 30_000);

  it.skipIf(chromiumMissing)(`counts a live run's duration from its start, not up to its last event${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, async () => {
    const folder = join(project, '.manus', 'runs', '20261201-110000-quiet');
    mkdirSync(folder, { recursive: true });
    const startedAt = Date.now() - 90_000;
    const event = (type: string, at: number, extra: Record<string, unknown> = {}) => JSON.stringify({ type, time: new Date(at).toISOString(), ...extra });
    writeFileSync(join(folder, 'events.jsonl'), [
      event('run-start', startedAt, { runId: '20261201-110000-quiet', pid: process.pid, host: hostname(), recipe: { name: 'quiet-run' }, agent: 'manus', budgets: { steps: 5 } }),
      event('model-request', startedAt + 1000, { step: 1 }),
      '',
    ].join('\n'));
    try {
      const { page, errors } = await newPage();
      await page.goto(`${origin}/runs/20261201-110000-quiet`);
      // A minute and a half since it started, though its last event came a second after the start.
      await page.waitForFunction(() => /^1 min 3\d s$/.test(document.getElementById('run-duration')?.textContent ?? ''), undefined, { timeout: 5_000 });
      const first = await page.locator('#run-duration').textContent();
      await page.waitForFunction((shown) => document.getElementById('run-duration')?.textContent !== shown, first, { timeout: 5_000 });
      expect(errors).toEqual([]);
    } finally {
      // The list test that follows starts from a runs folder with no run in it.
      rmSync(folder, { recursive: true, force: true });
    }
  }, 30_000);

  it('says what is wrong with a view that cannot be made', async () => {
    const unknown = await runCli(['view', 'no-such-run'], { cwd: project });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("unknown run 'no-such-run'");
    expect(unknown.stderr).toContain('no batch');
    const port = await runCli(['view', '--port', '8080'], { cwd: project });
    expect(port.exitCode).toBe(2);
    expect(port.stderr).toContain('--port goes with --serve');
    const both = await runCli(['view', 'some-run', '--serve'], { cwd: project });
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('view --serve takes no run or batch');
  });

  it.skipIf(chromiumMissing)(`shows a run that starts while the list is open, and its steps as they happen${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, async () => {
    const { page, errors } = await newPage();
    await page.goto(`${origin}/`);
    expect(await page.locator('#runs tbody tr').count()).toBe(0);
    await page.evaluate(() => ((window as { __sameDocument?: boolean }).__sameDocument = true));
    const run = runCli(['run', 'recipe.yaml', '--json', '--trust', 'env'], { cwd: project, env: { SERVE_API_KEY: apiKey }, timeoutMs: 60_000 });

    const row = page.locator('#runs tbody tr[data-status="running"]');
    await row.waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => (window as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    await page.locator('input[data-filter-for="runs"]').fill('slow-notes');
    expect(await row.isVisible()).toBe(true);
    await row.locator('a').click();
    await page.locator('#run-header .status', { hasText: 'running' }).first().waitFor();
    const seen = await page.locator('li.step').count();
    expect(seen).toBeLessThan(stepCount);
    await page.evaluate(() => ((window as { __sameDocument?: boolean }).__sameDocument = true));
    // Steps arrive without a reload of the page.
    await page.waitForFunction((count) => document.querySelectorAll('li.step').length > count, seen + 1, { timeout: 15_000 });
    expect(await page.evaluate(() => (window as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    expect(await page.locator('#run-steps').textContent()).not.toBe(String(seen));
    expect(await page.locator('#timeline-count').textContent()).toBe(await page.locator('#run-steps').textContent());
    await keepScreenshot(page, 'served-run-in-progress');

    const result = await run;
    expect(result.exitCode, result.stderr).toBe(0);
    // Once the run ends, the page is drawn again whole: charts and all.
    await page.locator('#run-header h1 .status', { hasText: 'success' }).waitFor({ timeout: 15_000 });
    expect(await page.locator('li.step').count()).toBe(stepCount);
    expect(await page.locator('figure[data-chart="tokens"] .mark-symbol.role-mark path').count()).toBe(stepCount);
    expect(await page.content()).not.toContain(apiKey);
    expect(errors).toEqual([]);
    await keepScreenshot(page, 'served-run-ended');
  }, 90_000);
});
