/**
 * What the HTML reports are made from, in process: a run's view read from its events (the shipped
 * recordings, made before reports existed, among them), the page's escaping and redaction, the
 * batch folder as the contract describes it, and the images a run keeps for its report.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from 'linkedom';
import { afterAll, describe, expect, it } from 'vitest';
import { readBatchFolder } from '../runtime/applications/reports/batch-folder.js';
import { writeBatchHtmlReport } from '../runtime/applications/reports/batch-html-report.js';
import { runHtml, writeRunHtmlReport } from '../runtime/applications/reports/run-html-report.js';
import { runViewFromText } from '../runtime/applications/reports/run-view.js';
import { imageRecorder } from '../runtime/kernel/run-images.js';
import { SecretRedactor } from '../runtime/services/secret-redaction.js';
import { repositoryRoot } from './support/run-cli.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-run-view-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;
const newFolder = () => {
  const folder = join(root, `case-${(folders += 1)}`);
  mkdirSync(folder, { recursive: true });
  return folder;
};

const recording = (name: string) => readFileSync(join(repositoryRoot, 'recipes', 'recordings', `${name}.jsonl`), 'utf8');
const parse = (html: string) => new DOMParser().parseFromString(html, 'text/html');
const lines = (events: Array<Record<string, unknown>>) => `${events.map((event) => JSON.stringify(event)).join('\n')}\n`;
const writeEvents = (folder: string, events: Array<Record<string, unknown>>) => {
  const file = join(folder, 'events.jsonl');
  writeFileSync(file, lines(events));
  return file;
};

/** A small run: one step with a tool call whose arguments and result are given. */
function runEvents(result: string, extra: Array<Record<string, unknown>> = []) {
  const time = '2026-12-01T10:00:00.000Z';
  return [
    { type: 'run-start', time, runId: 'run-1', recipe: { name: 'small', file: 'small.yaml', overrides: { parameters: { topic: 'owls' } } }, agent: 'manus', model: { model: 'gpt-test', profile: 'default' }, budgets: { steps: 5, cost: 0.5 } },
    { type: 'model-request', time, step: 1 },
    { type: 'model-response', time, step: 1, content: 'I look.', toolCalls: [], usage: { promptTokens: 100, completionTokens: 10, totalTokens: 110 }, durationMs: 40 },
    { type: 'tool-call-start', time, step: 1, callId: 'c1', tool: 'web_fetch', arguments: { url: 'http://example.test/' } },
    { type: 'tool-call-end', time, step: 1, callId: 'c1', tool: 'web_fetch', isError: false, content: result, truncated: false, durationMs: 12 },
    { type: 'step-end', time, step: 1, kind: 'finished', durationMs: 60, usage: { promptTokens: 100, completionTokens: 10, totalTokens: 110 }, cost: 0.002 },
    ...extra,
    { type: 'run-end', time, status: 'success', exitCode: 0, answer: 'Done.', checks: [], attempts: 1, steps: 1, usage: { promptTokens: 100, completionTokens: 10, totalTokens: 110 }, cost: 0.002, durationMs: 70, files: [] },
  ];
}

describe('a run read from its events', () => {
  it.each(['ask', 'country-facts', 'data-analysis', 'planning-flow', 'project-tour', 'swe'])('renders the shipped recording %s, one step per model request', async (name) => {
    const text = recording(name);
    const view = runViewFromText(name, root, text);
    const end = text.trim().split('\n').map((line) => JSON.parse(line)).find((event) => event.type === 'run-end');
    expect(view.ended).toBe(true);
    expect(view.steps.length).toBe(end.steps);
    expect(view.status).toBe(end.status);
    const page = parse(await runHtml(view, { runDirectory: root }));
    expect(page.querySelectorAll('li.step').length).toBe(end.steps);
    expect(page.querySelectorAll('figure[data-chart="tokens"] svg').length).toBe(1);
    expect(page.querySelector('#run-status')!.textContent).toBe(end.status);
  });

  it('shows a flow as a tree and its plan with each step\'s status and executor', async () => {
    const view = runViewFromText('flow', root, recording('planning-flow'));
    expect(view.flow.map((node) => node.path)).toEqual(['work']);
    expect(view.flow[0].children.map((node) => [node.path, node.status])).toEqual([['work/plan', 'success'], ['work/1', 'success'], ['work/2', 'success'], ['work/answer', 'success']]);
    expect(view.plans[0].steps.map((step) => [step.title, step.executor, step.status])).toEqual([['Compute the sum', 'manus', 'success'], ['Record the result', 'data_analysis', 'success']]);
    expect(view.plans[0].changes.map((change) => change.change)).toEqual(['created', 'step-start', 'step-end', 'step-start', 'step-end', 'answered']);
  });

  it('puts the branches of a parallel step side by side', async () => {
    const time = '2026-12-01T10:00:00.000Z';
    const step = (path: string, kind: string, status?: string) => status
      ? { type: 'flow-step-end', time, path, kind, status, steps: 1, durationMs: 5 }
      : { type: 'flow-step-start', time, path, kind, name: path.split('/').at(-1) };
    const events = [
      { type: 'run-start', time, runId: 'fan', recipe: { name: 'fan-out' }, agent: 'fan-out (flow)' },
      step('research', 'parallel'), step('research/1', 'agent'), step('research/2', 'agent'),
      { type: 'model-request', time, path: 'research/2', step: 1 },
      { type: 'model-request', time, path: 'research/1', step: 1 },
      step('research/2', 'agent', 'success'), step('research/1', 'agent', 'failure'), step('research', 'parallel', 'failure'),
      step('report', 'agent'), step('report', 'agent', 'success'),
    ];
    const page = parse(await runHtml(runViewFromText('fan', root, lines(events)), { runDirectory: root }));
    const branches = page.querySelector('.flow-node[data-path="research"] > .flow-children.parallel')!;
    expect([...branches.children].map((node) => [node.getAttribute('data-path'), node.getAttribute('data-status')])).toEqual([['research/1', 'failure'], ['research/2', 'success']]);
    expect(page.querySelector('.flow-node[data-path="report"]')!.parentElement!.classList.contains('parallel')).toBe(false);
    // Each step of the timeline is its branch's, even when the branches ask in turns.
    expect([...page.querySelectorAll('li.step .step-path')].map((node) => node.textContent)).toEqual(['research/2', 'research/1']);
    expect(page.querySelector('#run-header')!.textContent).toContain('Flow');
  });

  it('shows the checks of a run, each with its output', async () => {
    const page = parse(await runHtml(runViewFromText('data', root, recording('data-analysis')), { runDirectory: root }));
    expect(page.querySelectorAll('tr.check-passed').length).toBe(3);
    expect(page.querySelector('tr.check-passed pre')!.textContent).toContain('report.html exists');
  });

  it('reads an events file that ends mid-line, warning about the line it skipped', async () => {
    const text = recording('swe');
    const view = runViewFromText('cut', root, text.slice(0, text.length - 25));
    expect(view.ended).toBe(false);
    expect(view.status).toBe('incomplete');
    expect(view.warnings.join()).toContain('was cut off');
    expect(view.steps.length).toBe(5);
    const page = parse(await runHtml(view, { runDirectory: root }));
    expect(page.querySelector('#notes')!.textContent).toContain('was cut off');
  });

  it('tells at the step that follows it that the run was resumed', async () => {
    const events = runEvents('ok');
    const time = '2026-12-01T11:00:00.000Z';
    const resumed = [
      ...events.slice(0, -1),
      { type: 'run-resume', time, step: 1 },
      { type: 'model-request', time, step: 2 },
      { type: 'model-response', time, step: 2, content: 'Again.', usage: { promptTokens: 5, completionTokens: 1, totalTokens: 6 }, durationMs: 3 },
      { type: 'step-end', time, step: 2, kind: 'finished', durationMs: 4 },
      events.at(-1)!,
    ];
    const view = runViewFromText('resumed', root, lines(resumed));
    expect(view.steps.map((step) => step.before)).toEqual([[], ['Resumed at 2026-12-01T11:00:00.000Z, after step 1.']]);
    expect(view.notes).toEqual([]);
    const page = parse(await runHtml(view, { runDirectory: root }));
    expect(page.querySelector('#step-2 .note')!.textContent).toContain('Resumed at');
  });

  it('counts each step\'s own cost from the running totals the loop records', () => {
    const view = runViewFromText('cost', root, lines(runEvents('ok')));
    expect(view.steps[0].cost).toBe(0.002);
    expect(view.budgets.cost).toBe(0.5);
    expect(view.parameters).toEqual({ topic: 'owls' });
  });
});

describe('the HTML page', () => {
  it('escapes every string from the run, so markup in a tool result stays text', async () => {
    const hostile = '</pre><script>alert(1)</script><img src=x onerror=alert(2)>"\'';
    const events = runEvents(hostile);
    (events[3] as { tool: string }).tool = '<b>tool</b>';
    (events[0] as { recipe: { name: string } }).recipe.name = '<i>name</i>';
    const html = await runHtml(runViewFromText('x', root, lines(events)), { runDirectory: root });
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>tool</b>');
    expect(html).not.toContain('<i>name</i>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const page = parse(html);
    expect(page.querySelector('pre.tool-result')!.textContent).toBe(hostile);
    // Only the page's own script, allowed by its nonce; nothing loads from anywhere.
    expect(page.querySelectorAll('script').length).toBe(1);
    const policy = page.querySelector('meta[http-equiv="Content-Security-Policy"]')!.getAttribute('content')!;
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("connect-src 'none'");
    expect(policy).toMatch(/script-src 'nonce-[^']+'/);
  });

  it('redacts secrets known now from runs recorded without them, in every form', async () => {
    const secret = 'sk-later-known-secret-0042';
    const events = runEvents(`the key is ${secret}, encoded ${Buffer.from(secret).toString('base64')}`);
    const folder = newFolder();
    writeFileSync(join(folder, 'events.jsonl'), lines(events));
    const file = await writeRunHtmlReport(join(folder, 'events.jsonl'), join(folder, 'manus-report.html'), { runDirectory: folder, redactor: new SecretRedactor([secret]) });
    const html = readFileSync(file, 'utf8');
    expect(html).not.toContain(secret);
    expect(html).not.toContain(Buffer.from(secret).toString('base64'));
    expect(html).toContain('[redacted]');
  });

  it('inlines the images a run kept, and refuses an image named outside the run folder', async () => {
    const folder = newFolder();
    const emitted: Array<[string, Record<string, unknown>]> = [];
    const record = imageRecorder(folder, { emit: (type, data) => emitted.push([type, data]), redact: (text) => text });
    record(1, 'browser_state', [{ data: Buffer.from('fake image bytes').toString('base64'), mimeType: 'image/png' }]);
    expect(emitted.map(([type]) => type)).toEqual(['image-saved']);
    const saved = emitted[0][1] as { file: string; step: number; source: string };
    expect(saved).toMatchObject({ step: 1, source: 'browser_state', mimeType: 'image/png' });
    expect(readFileSync(join(folder, saved.file), 'utf8')).toBe('fake image bytes');
    const events = runEvents('ok', [
      { type: 'image-saved', time: '2026-12-01T10:00:00.000Z', step: 1, source: 'browser_state', file: saved.file, mimeType: 'image/png' },
      { type: 'image-saved', time: '2026-12-01T10:00:00.000Z', step: 1, source: 'browser_state', file: '../../etc/passwd', mimeType: 'image/png' },
    ]);
    const page = parse(await runHtml(runViewFromText('images', folder, lines(events)), { runDirectory: folder }));
    const images = page.querySelectorAll('figure.screenshot img');
    expect(images.length).toBe(1);
    expect(images[0].getAttribute('src')).toBe(`data:image/png;base64,${Buffer.from('fake image bytes').toString('base64')}`);
    expect(page.querySelector('#step-1 .note')!.textContent).toContain('no longer in the run folder');
  });
});

describe('the files a run wrote', () => {
  const png = Buffer.from('89504e470d0a1a0a', 'hex');
  const withFiles = (workspace: string, files: string[]) => runEvents('ok').map((event) =>
    event.type === 'run-start' ? { ...event, workspace } : event.type === 'run-end' ? { ...event, files } : event);

  it('shows the images among them, links each one, and shows no image from outside the workspace', async () => {
    const folder = newFolder();
    const workspace = join(folder, 'workspace');
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'chart.png'), png);
    writeFileSync(join(workspace, 'report.md'), '# Report');
    writeFileSync(join(folder, 'outside.png'), png);
    symlinkSync(join(folder, 'outside.png'), join(workspace, 'linked.png'));
    const events = withFiles(workspace, ['chart.png', 'report.md', 'linked.png', '../outside.png']);
    const file = await writeRunHtmlReport(writeEvents(folder, events), join(folder, 'out', 'manus-report.html'), { runDirectory: folder });
    const page = parse(readFileSync(file, 'utf8'));
    const images = [...page.querySelectorAll('#files figure img')];
    expect(images.map((image) => [image.getAttribute('alt'), image.getAttribute('src')])).toEqual([['chart.png', `data:image/png;base64,${png.toString('base64')}`]]);
    expect([...page.querySelectorAll('#files a')].map((link) => link.getAttribute('href'))).toEqual(['../workspace/chart.png', '../workspace/report.md', '../workspace/linked.png']);
  });

  it('are linked from a batch item\'s page, from the folder the batch ran in; not for an item run on a worker', async () => {
    const cwd = newFolder();
    const batch = join(cwd, '.manus', 'batches', 'b1');
    const workspace = join(cwd, 'workspace', 'r0');
    mkdirSync(join(batch, 'runs', 'r0'), { recursive: true });
    mkdirSync(join(batch, 'runs', 'r1'), { recursive: true });
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, 'chart.png'), png);
    writeEvents(join(batch, 'runs', 'r0'), withFiles('workspace/r0', ['chart.png']));
    writeEvents(join(batch, 'runs', 'r1'), withFiles('workspace/r0', ['chart.png']));
    writeFileSync(join(batch, 'batch.json'), JSON.stringify({ version: 1, id: 'b1', recipe: { name: 'many' }, status: 'success', settings: { cwd } }));
    writeFileSync(join(batch, 'items.jsonl'), [
      JSON.stringify({ index: 0, status: 'success', answer: 'here', runDirectory: 'runs/r0' }),
      JSON.stringify({ index: 1, status: 'success', answer: 'returned', runDirectory: 'runs/r1', worker: { host: 'w1' } }),
    ].join('\n'));
    const written = await writeBatchHtmlReport(batch, join(cwd, 'reports', 'manus-report.html'));
    const here = parse(readFileSync(written.items[0], 'utf8'));
    expect([...here.querySelectorAll('#files a')].map((link) => link.getAttribute('href'))).toEqual(['../../workspace/r0/chart.png']);
    expect(here.querySelectorAll('#files figure img').length).toBe(1);
    // A worker's events name a workspace on the worker: nothing on this machine is read for them.
    const returned = parse(readFileSync(written.items[1], 'utf8'));
    expect(returned.querySelectorAll('#files a').length).toBe(0);
    expect(returned.querySelectorAll('#files img').length).toBe(0);
  });
});

describe('a batch folder', () => {
  function batchFolder(items: string, batch: Record<string, unknown> = {}): string {
    const folder = newFolder();
    writeFileSync(join(folder, 'batch.json'), JSON.stringify({ version: 1, id: 'b1', recipe: { name: 'many' }, createdAt: '2026-12-01T10:00:00.000Z', status: 'running', ...batch }));
    writeFileSync(join(folder, 'items.jsonl'), items);
    return folder;
  }

  it('takes the last line for each item, skips a line cut off mid-write and ignores unknown fields', async () => {
    const folder = batchFolder([
      JSON.stringify({ index: 1, status: 'interrupted', answer: 'first try' }),
      JSON.stringify({ index: 0, status: 'success', answer: 'zero', usage: { totalTokens: 5 }, runDirectory: 'runs/r0', futureField: { any: 1 } }),
      JSON.stringify({ index: 1, status: 'success', answer: 'second try', usage: { totalTokens: 7 }, durationMs: 1500 }),
      '{"index": 2, "stat',
    ].join('\n'));
    const batch = await readBatchFolder(folder);
    expect(batch.items.map((item) => [item.index, item.status, item.answer])).toEqual([[0, 'success', 'zero'], [1, 'success', 'second try']]);
    expect(batch.items[0].runDirectory).toBe(join(folder, 'runs', 'r0'));
    expect(batch.items[0].events).toEqual({ stored: 'local', path: join(folder, 'runs', 'r0', 'events.jsonl') });
    expect(batch.warnings).toEqual(['the last line of items.jsonl was cut off; it was skipped']);
    expect(batch.finishedAt).toBeUndefined();
    expect(batch.exitCode).toBeUndefined();
    // Without totals in batch.json, the items add up.
    expect(batch.totals).toMatchObject({ items: 2, succeeded: 2, failed: 0, totalTokens: 12 });
  });

  it('writes a page per item beside the batch\'s page, escaping what items say', async () => {
    const folder = batchFolder(`${JSON.stringify({ index: 0, status: 'failure', answer: '<script>alert(1)</script>', parameters: { topic: '<b>x</b>' }, events: { stored: 'worker', path: '/w/runs/r/events.jsonl' }, worker: { host: 'w1' } })}\n`);
    const written = await writeBatchHtmlReport(folder, join(folder, 'out', 'manus-report.html'));
    expect(written.items).toEqual([join(folder, 'out', 'manus-report-items', 'item-1.html')]);
    const html = readFileSync(written.file, 'utf8');
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<b>x</b>');
    const page = parse(html);
    expect(page.querySelector('a.item-report')!.getAttribute('href')).toBe('manus-report-items/item-1.html');
    const item = parse(readFileSync(written.items[0], 'utf8'));
    expect(item.querySelector('#events-location')!.textContent).toBe('The item\'s events stayed on the worker w1, at /w/runs/r/events.jsonl.');
  });

  it('shows a batch\'s concurrency only when it ran in one process: a queue\'s workers choose their own', async () => {
    const facts = async (batch: Record<string, unknown>) => {
      const written = await writeBatchHtmlReport(batchFolder('', batch), join(newFolder(), 'manus-report.html'));
      const page = parse(readFileSync(written.file, 'utf8'));
      return [...page.querySelectorAll('dl.facts dt')].map((term) => term.textContent);
    };
    expect(await facts({ concurrency: 8 })).toContain('Concurrency');
    expect(await facts({ concurrency: 8, queue: 'redis://127.0.0.1:6379/0' })).not.toContain('Concurrency');
  });
});
