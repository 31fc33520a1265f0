/**
 * The HTML reports as a person sees them: real runs of the built command (a browsing agent whose
 * model takes screenshots, a planning flow with a replanned step), a batch folder made from them,
 * each report opened in real Chromium and checked for what a person would look for. A screenshot
 * of each page is kept under test/artifacts/view/.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissing as isChromiumMissing, startFixtureSite, type FixtureSite } from './support/fixture-site.js';
import { keepScreenshot, useReportBrowser } from './support/report-browser.js';
import { makeFixture, privateNetworkConfigHome, readEvents, runCli, type CliResult } from './support/run-cli.js';
import { startScriptedModelServer, type ScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

const chromiumMissing = isChromiumMissing('report viewer');

const apiKey = 'sk-view-profile-key-5d1f8a2c';
const deployToken = 'tok-deploy-secret-77aa31';
const hostile = '<script>window.__owned = true</script><img src="x" onerror="window.__owned = true">';

const agentsYaml = (baseUrl: string) => `version: 1
llm:
  default:
    provider: openai-compatible
    base_url: ${baseUrl}
    api_key_env: VIEW_API_KEY
    model: scripted-model
    vision: true
    price: { input_per_million: 2, output_per_million: 8 }
agents:
  researcher: { description: Researches., system_prompt: You research., tools: [terminate] }
  writer: { description: Writes., system_prompt: You write., tools: [terminate] }
`;

const browseRecipe = (origin: string) => `version: 1
name: browse-report
prompt: Read the article at ${origin}/article.html and keep a note.
agent:
  system_prompt: You browse the web.
  tools: [browser_use, str_replace_editor, terminate]
  context_providers: [browser_state]
  max_steps: 8
budgets: { cost: 0.05, tokens: 200000 }
checks:
  - file: note.md
    name: the note exists
  - file: note.md
    matches: "cloud forest"
    name: the note names the cloud forest
`;

const flowRecipe = `version: 1
name: planned-report
parameters:
  task: { type: string }
flow:
  - name: work
    kind: plan
    planner: { agent: planner }
    executors: [researcher, writer]
    default_executor: writer
    max_replans: 1
    prompt: "{{task}}"
`;

const usage = (prompt: number, completion: number) => ({ prompt_tokens: prompt, completion_tokens: completion });
const call = (name: string, args: Record<string, unknown>, tokens = usage(900, 60), content?: string): ScriptedTurn => ({ content, toolCalls: [{ name, arguments: args }], usage: tokens });
const plan = (steps: Array<{ title: string; executor?: string }>) =>
  call('create_chat_completion', { response: { title: 'Owls', steps: steps.map((step) => ({ description: `Do: ${step.title}`, ...step })) } });
const terminate = (message: string, status = 'success') => call('terminate', { status, message }, usage(400, 30));

let site: FixtureSite;
let model: ScriptedModelServer;
let project: string;
// The fixture site is on loopback: allowed in the user's configuration, as a user would.
const environment = () => ({ VIEW_API_KEY: apiKey, DEPLOY_TOKEN: deployToken, XDG_CONFIG_HOME: privateNetworkConfigHome() });
let browseRun: CliResult;
let flowRun: CliResult;
let browseReportFolder: string;

beforeAll(async () => {
  if (chromiumMissing) return;
  site = await startFixtureSite();
  model = await startScriptedModelServer({ turns: [] });
  project = makeFixture({ 'agents.yaml': agentsYaml(model.baseUrl), 'browse.yaml': browseRecipe(site.origin), 'flow.yaml': flowRecipe });
  model.setTurns([
    call('browser_use', { action: 'go_to_url', url: `${site.origin}/article.html` }, usage(1200, 40), 'I open the article.'),
    // The model repeats a secret it should never have seen, and writes markup that must stay text.
    call('str_replace_editor', { command: 'create', path: 'note.md', file_text: `Glass frogs.\n${hostile}\n` }, usage(2400, 120), `Writing the note; the key is ${apiKey} and the token ${deployToken}.`),
    call('str_replace_editor', { command: 'view', path: 'note.md' }, usage(2600, 40)),
    terminate('Kept a note about glass frogs.'),
  ]);
  browseReportFolder = join(project, 'reports');
  browseRun = await runCli(['run', 'browse.yaml', '--json', '--trust', 'env', '--report', browseReportFolder], { cwd: project, env: environment(), timeoutMs: 90_000 });
  model.setTurns([
    plan([{ title: 'Find facts', executor: 'researcher' }, { title: 'Write it up' }]),
    terminate('no sources reachable', 'failure'),
    plan([{ title: 'Write from memory', executor: 'writer' }]),
    terminate('A page from memory.'),
    terminate('Owls, from memory.'),
  ]);
  flowRun = await runCli(['run', 'flow.yaml', '--json', '--trust', 'env', '--param', 'task=Write about owls.'], { cwd: project, env: environment(), timeoutMs: 60_000 });
}, 180_000);

afterAll(async () => {
  await model?.close();
  await site?.close();
});

const { newPage } = useReportBrowser();

describe.skipIf(chromiumMissing)(`the HTML report${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, () => {
  it('of a browsing run: its steps, screenshots, tool results, cost per step and a failed check', async () => {
    expect(model.expectationFailures).toEqual([]);
    expect(browseRun.exitCode, `${browseRun.stderr}\n${browseRun.stdout}`).toBe(1);
    expect(browseRun.json.status).toBe('checks-failed');
    expect(browseRun.stderr).toContain(join(browseReportFolder, 'manus-report.html'));
    const file = join(browseReportFolder, 'manus-report.html');
    const html = readFileSync(file, 'utf8');
    expect(html).not.toContain(apiKey);
    expect(html).not.toContain(deployToken);
    expect(html).not.toContain(Buffer.from(apiKey).toString('base64'));
    expect(html).not.toContain('<script>window.__owned');
    expect(html).not.toMatch(/<(?:link|script)[^>]+(?:src|href)=/i);

    const { page, errors } = await newPage();
    await page.goto(pathToFileURL(file).href);
    expect(await page.locator('li.step').count()).toBe(4);
    expect(await page.locator('#run-steps').textContent()).toBe('4');
    expect(await page.locator('#run-header .status').first().textContent()).toBe('checks-failed');

    // The page the model saw after it navigated, at the step that saw it.
    const screenshot = page.locator('#step-2 figure.screenshot img');
    expect(await screenshot.count()).toBe(1);
    expect(await screenshot.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 100)).toBe(true);

    // A tool result is folded until clicked.
    const viewCall = page.locator('#step-3 details.tool-call');
    const result = viewCall.locator('pre.tool-result');
    expect(await result.isVisible()).toBe(false);
    await viewCall.locator('summary').click();
    expect(await result.isVisible()).toBe(true);
    expect(await result.textContent()).toContain('<script>window.__owned = true</script>');

    // One point per step on the cost chart, and its budget line.
    expect(await page.locator('figure[data-chart="cost"] .mark-symbol.role-mark path').count()).toBe(4);
    expect(await page.locator('figure[data-chart="cost"] .mark-rule.role-mark line').count()).toBe(1);
    expect(await page.locator('figure[data-chart="tokens"] .mark-symbol.role-mark path').count()).toBe(4);
    expect(await page.locator('figure[data-chart="time"] .mark-rect.role-mark path').count()).toBe(8);

    // The failed check is red; the one that passed is not.
    const failed = page.locator('tr.check-failed');
    expect(await failed.count()).toBe(1);
    expect(await failed.locator('td').first().textContent()).toBe('the note names the cloud forest');
    expect(await failed.locator('td').first().evaluate((cell) => getComputedStyle(cell).color)).toBe('rgb(207, 34, 46)');
    expect(await page.locator('tr.check-passed td').first().evaluate((cell) => getComputedStyle(cell).color)).not.toBe('rgb(207, 34, 46)');

    // The file the run wrote is linked, and the link leads to it.
    const link = page.locator('#files a', { hasText: 'note.md' });
    const target = new URL((await link.getAttribute('href'))!, page.url());
    expect(readFileSync(target, 'utf8')).toContain('Glass frogs.');

    // The timeline filters by any text in a step, or to the steps with a failed tool call.
    const shownSteps = () => page.locator('li.step').evaluateAll((steps) => steps.filter((step) => !(step as HTMLElement).hidden).map((step) => step.id));
    await page.locator('input[data-filter-steps]').fill('note.md');
    expect(await shownSteps()).toEqual(['step-2', 'step-3']);
    await page.locator('input[data-filter-steps]').fill('');
    await page.locator('input[data-errors-only]').check();
    expect(await shownSteps()).toEqual([]);
    await page.locator('input[data-errors-only]').uncheck();
    expect((await shownSteps()).length).toBe(4);

    // Markup from the model is shown as text and never runs, even with every call opened.
    await page.locator('button[data-details="open"]').click();
    expect(await page.evaluate(() => (window as { __owned?: boolean }).__owned)).toBeUndefined();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(errors).toEqual([]);
    await keepScreenshot(page, 'browsing-run');
  }, 60_000);

  it('of a flow: the tree of its steps with the replanned one, and the plan with its revision', async () => {
    expect(flowRun.exitCode, flowRun.stderr).toBe(0);
    const view = await runCli(['view', flowRun.json.runId], { cwd: project, env: environment() });
    expect(view.exitCode, view.stderr).toBe(0);
    const file = view.stdout.trim();
    expect(file).toBe(join(flowRun.json.runDirectory, 'manus-report.html'));
    expect(readFileSync(file, 'utf8')).not.toContain(apiKey);

    const { page, errors } = await newPage();
    await page.goto(pathToFileURL(file).href);
    expect(await page.locator('li.step').count()).toBe(flowRun.json.steps);
    expect(await page.locator('.flow-node').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-path')))).toEqual(['work', 'work/plan', 'work/1', 'work/replan-1', 'work/2', 'work/answer']);
    const failedStep = page.locator('.flow-node[data-path="work/1"]');
    expect(await failedStep.getAttribute('data-status')).toBe('failure');
    expect(await failedStep.evaluate((node) => getComputedStyle(node).borderLeftColor)).toBe('rgb(207, 34, 46)');
    expect(await failedStep.locator('.flow-reason').textContent()).toContain('no sources reachable');
    expect(await page.locator('.flow-node[data-path="work/replan-1"] .replan').textContent()).toBe('replan');
    expect(await page.locator('.plan .plan-replans').textContent()).toBe('revised 1 time');
    expect(await page.locator('.plan tbody tr').evaluateAll((rows) => rows.map((row) => [row.children[2].textContent, row.getAttribute('data-status')]))).toEqual([
      ['researcher', 'failure'],
      ['writer', 'success'],
    ]);
    // The tree links to each step's part of the timeline.
    await page.locator('.flow-node[data-path="work/2"] a').click();
    expect(page.url()).toMatch(/#step-\d+$/);
    expect(errors).toEqual([]);
    await keepScreenshot(page, 'flow-run');
  }, 60_000);

  it('of a batch: a table that sorts and filters, totals, a histogram, and links to each item\'s report', async () => {
    const batchId = '20261201-150000-batch1';
    const batchFolder = join(project, '.manus', 'batches', batchId);
    mkdirSync(batchFolder, { recursive: true });
    const item = (index: number, run: CliResult, durationMs: number) => ({
      index,
      parameters: { topic: `topic ${index}` },
      runId: run.json.runId,
      runDirectory: `../../runs/${run.json.runId}`,
      status: run.json.status,
      exitCode: run.exitCode,
      answer: run.json.answer,
      usage: run.json.usage,
      cost: run.json.cost,
      durationMs,
      startedAt: run.json.startedAt,
      attempts: 1,
      checks: run.json.checks,
      events: { stored: 'local', path: `../../runs/${run.json.runId}/events.jsonl` },
    });
    const onWorker = {
      index: 2,
      parameters: { topic: 'topic 2' },
      runId: '20261201-150100-remote',
      runDirectory: '/srv/manus/runs/20261201-150100-remote',
      status: 'success',
      exitCode: 0,
      answer: 'Answered on the worker.',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
      durationMs: 9000,
      startedAt: '2026-12-01T15:01:00.000Z',
      attempts: 1,
      worker: { id: 'worker-b', host: 'build-7', pid: 4242 },
      events: { stored: 'worker', path: '/srv/manus/runs/20261201-150100-remote/events.jsonl' },
    };
    const lines = [
      { ...item(1, flowRun, 1000), status: 'interrupted' },
      item(0, browseRun, 4000),
      item(1, flowRun, 2500),
      onWorker,
    ].map((line) => JSON.stringify(line));
    // A line cut off mid-write by a worker still writing.
    writeFileSync(join(batchFolder, 'items.jsonl'), `${lines.join('\n')}\n{"index": 3, "status": "succ`);
    writeFileSync(join(batchFolder, 'batch.json'), JSON.stringify({
      version: 1,
      id: batchId,
      recipe: { name: 'report-batch', file: 'browse.yaml', hash: 'sha256:00' },
      createdAt: '2026-12-01T15:00:00.000Z',
      inputs: { file: 'topics.csv', count: 4 },
      concurrency: 2,
      budgets: {},
      status: 'running',
      totals: { items: 4, succeeded: 2, failed: 1, running: 1, pending: 0, promptTokens: 100, completionTokens: 20, totalTokens: 120, durationMs: 15000 },
    }));
    const view = await runCli(['view', batchId], { cwd: project, env: environment() });
    expect(view.exitCode, view.stderr).toBe(0);
    const file = view.stdout.trim();
    expect(file).toBe(join(batchFolder, 'manus-report.html'));

    const { page, errors } = await newPage();
    await page.goto(pathToFileURL(file).href);
    const rows = page.locator('#batch-items tbody tr');
    expect(await rows.count()).toBe(3);
    expect(await page.locator('#batch-totals').textContent()).toContain('4 in all: 2 succeeded, 1 failed, 1 running');
    expect(await page.locator('figure[data-chart="durations"] .mark-rect path').count()).toBeGreaterThan(0);
    expect(await page.locator('#notes').textContent()).toContain('cut off');

    const numbers = () => rows.evaluateAll((all) => all.filter((row) => !(row as HTMLElement).hidden).map((row) => row.getAttribute('data-item')));
    await page.locator('#batch-items th', { hasText: 'Duration' }).click();
    expect(await numbers()).toEqual(['2', '1', '3']);
    await page.locator('#batch-items th', { hasText: 'Duration' }).click();
    expect(await numbers()).toEqual(['3', '1', '2']);
    await page.locator('select[data-filter-for="batch-items"]').selectOption('checks-failed');
    expect(await numbers()).toEqual(['1']);
    await page.locator('select[data-filter-for="batch-items"]').selectOption('');
    await page.locator('input[data-filter-for="batch-items"]').fill('build-7');
    expect(await numbers()).toEqual(['3']);
    await page.locator('input[data-filter-for="batch-items"]').fill('');
    await keepScreenshot(page, 'batch');

    // An item's link opens its own run's report, which links back.
    await page.locator('tr[data-item="2"] a.item-report').click();
    expect(await page.locator('li.step').count()).toBe(flowRun.json.steps);
    expect(await page.locator('#run-header h1').textContent()).toContain('planned-report');
    await page.goBack();
    await page.locator('tr[data-item="3"] a.item-report').click();
    expect(await page.locator('#events-location').textContent()).toBe('The item\'s events stayed on the worker build-7 (worker-b), at /srv/manus/runs/20261201-150100-remote/events.jsonl.');
    expect(errors).toEqual([]);
  }, 60_000);

  it('reads runs recorded before reports existed, and an events file cut off mid-line', async () => {
    const events = readEvents(flowRun.json.runDirectory);
    const text = events.map((event) => JSON.stringify(event)).join('\n');
    const cut = join(project, 'cut.jsonl');
    writeFileSync(cut, text.slice(0, text.length - 40));
    const view = await runCli(['view', cut], { cwd: project, env: environment() });
    expect(view.exitCode, view.stderr).toBe(0);
    expect(view.stdout.trim()).toBe(join(project, 'cut.html'));
    const { page, errors } = await newPage();
    await page.goto(pathToFileURL(view.stdout.trim()).href);
    expect(await page.locator('#notes').textContent()).toContain('was cut off');
    expect(await page.locator('li.step').count()).toBe(flowRun.json.steps);
    expect(errors).toEqual([]);
  }, 30_000);
});
