/**
 * Measures the HTML report on a big run: 500 steps and about 5 MB of events, each step a model
 * reply and a tool call with a long result, as a research run makes them. Prints how long writing
 * the page takes and how long Chromium takes to show it (navigation start to the second frame
 * after load, when the page is laid out and painted), against a floor in the same run: a page of
 * the report's own size that shows nothing (its bytes in a comment), what reading and parsing that
 * much HTML costs at least; and, for comparison, the events file shown as one escaped <pre>.
 * The pages are loaded in turns, so a change in the machine's speed affects them alike.
 *
 *   npm run bench:view            BENCH_REPETITIONS=7 by default; --json prints the raw figures
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { writeRunHtmlReport } from '../runtime/applications/reports/run-html-report.js';
import { escapeHtml } from '../runtime/applications/reports/html-text.js';

const steps = 500;
const repetitions = Number(process.env.BENCH_REPETITIONS ?? 7);
const chromiumPath = process.env.MANUS_CHROMIUM_PATH ?? '/usr/bin/chromium';
const chromiumArguments = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** Text like a fetched page's: words and lines, different in every step. */
function pageText(step: number, characters: number): string {
  const words = ['glass', 'frog', 'cloud', 'forest', 'night', 'call', 'egg', 'leaf', 'stream', 'survey', 'species', 'habitat'];
  let text = '';
  for (let index = 0; text.length < characters; index += 1) text += `${words[(index * 7 + step) % words.length]}${index % 14 === 13 ? '\n' : ' '}`;
  return text;
}

function bigRun(): string {
  const start = Date.parse('2026-12-01T10:00:00.000Z');
  const at = (milliseconds: number) => new Date(start + milliseconds).toISOString();
  const events: Array<Record<string, unknown>> = [
    { type: 'run-start', time: at(0), runId: 'bench-run', recipe: { name: 'big-research', file: 'research.yaml', overrides: { parameters: { topic: 'glass frogs' } } }, agent: 'manus', model: { profile: 'default', provider: 'openai-compatible', model: 'bench-model' }, budgets: { steps: 600, tokens: 5_000_000, cost: 20 }, task: 'Research glass frogs.', workspace: 'workspace/bench-run' },
  ];
  let clock = 0;
  let usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for (let step = 1; step <= steps; step += 1) {
    const reply = { promptTokens: 2000 + step * 10, completionTokens: 120, totalTokens: 2120 + step * 10 };
    usage = { promptTokens: usage.promptTokens + reply.promptTokens, completionTokens: usage.completionTokens + reply.completionTokens, totalTokens: usage.totalTokens + reply.totalTokens };
    const content = `Step ${step}: ${pageText(step, 300)}`;
    const argumentsText = JSON.stringify({ action: 'extract', goal: pageText(step + 1, 200) });
    const result = pageText(step + 2, 6800);
    events.push(
      { type: 'model-request', time: at((clock += 5)), step, messages: step * 2, tools: 8 },
      { type: 'model-response', time: at((clock += 900)), step, content, toolCalls: [{ id: `call_${step}`, name: 'web_fetch', arguments: argumentsText }], finishReason: 'tool_calls', usage: reply, model: 'bench-model', attempts: 1, durationMs: 900 },
      { type: 'message', time: at(clock), step, message: { role: 'assistant', content, tool_calls: [{ id: `call_${step}`, type: 'function', function: { name: 'web_fetch', arguments: argumentsText } }] } },
      { type: 'tool-call-start', time: at((clock += 1)), step, callId: `call_${step}`, tool: 'web_fetch', arguments: JSON.parse(argumentsText) },
      { type: 'tool-call-end', time: at((clock += 400)), step, callId: `call_${step}`, tool: 'web_fetch', isError: step % 50 === 0, content: result, truncated: false, durationMs: 400 },
      { type: 'message', time: at(clock), step, message: { role: 'tool', tool_call_id: `call_${step}`, content: result.slice(0, 2000) } },
      { type: 'step-end', time: at((clock += 2)), step, kind: step === steps ? 'finished' : 'continue', durationMs: 1308, usage, cost: usage.promptTokens * 2e-6 + usage.completionTokens * 8e-6 },
    );
  }
  events.push({ type: 'run-end', time: at((clock += 10)), status: 'success', exitCode: 0, answer: 'Glass frogs are translucent.', checks: [], attempts: 1, steps, usage, cost: usage.promptTokens * 2e-6 + usage.completionTokens * 8e-6, durationMs: clock, files: ['report.md'] });
  return `${events.map((event) => JSON.stringify(event)).join('\n')}\n`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((first, second) => first - second);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const folder = mkdtempSync(join(tmpdir(), 'manus-view-bench-'));
try {
  const eventsFile = join(folder, 'events.jsonl');
  const eventsText = bigRun();
  writeFileSync(eventsFile, eventsText);
  const reportFile = join(folder, 'manus-report.html');
  const plainFile = join(folder, 'plain.html');
  writeFileSync(plainFile, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>plain</title></head><body><pre>${escapeHtml(eventsText)}</pre></body></html>\n`);

  const writeTimes: number[] = [];
  for (let repetition = 0; repetition < Math.max(3, Math.ceil(repetitions / 2)); repetition += 1) {
    const started = performance.now();
    await writeRunHtmlReport(eventsFile, reportFile, { runDirectory: folder });
    writeTimes.push(performance.now() - started);
  }

  const floorFile = join(folder, 'floor.html');
  writeFileSync(floorFile, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>floor</title></head><body><!--${readFileSync(reportFile, 'utf8').replaceAll('--', '- -')}--></body></html>\n`);

  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArguments });
  const shown = { report: [] as number[], floor: [] as number[], plain: [] as number[] };
  try {
    const showTime = async (file: string): Promise<number> => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      try {
        await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
        // performance.now() counts from the navigation's start; two frames after load the page is laid out and painted.
        return await page.evaluate(() => new Promise<number>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())))));
      } finally {
        await page.close();
      }
    };
    await showTime(reportFile);
    await showTime(floorFile);
    for (let repetition = 0; repetition < repetitions; repetition += 1) {
      shown.report.push(await showTime(reportFile));
      shown.floor.push(await showTime(floorFile));
      shown.plain.push(await showTime(plainFile));
    }
  } finally {
    await browser.close();
  }

  const figures = {
    steps,
    eventsMegabytes: statSync(eventsFile).size / 1e6,
    reportMegabytes: statSync(reportFile).size / 1e6,
    writeMs: writeTimes,
    reportShownMs: shown.report,
    floorShownMs: shown.floor,
    plainShownMs: shown.plain,
  };
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  } else {
    const round = (value: number) => Math.round(value);
    process.stdout.write([
      `big run: ${steps} steps, ${figures.eventsMegabytes.toFixed(1)} MB of events; the page is ${figures.reportMegabytes.toFixed(1)} MB`,
      `writing the page (events read, charts drawn, file written), median of ${writeTimes.length}: ${round(median(writeTimes))} ms`,
      `shown in Chromium, median of ${repetitions} (navigation start to the second frame after load):`,
      `  report ${round(median(shown.report))} ms (min ${round(Math.min(...shown.report))}, max ${round(Math.max(...shown.report))})`,
      `  floor  ${round(median(shown.floor))} ms (a page of the same size that shows nothing)`,
      `  ratio  ${(median(shown.report) / median(shown.floor)).toFixed(2)}`,
      `  plain  ${round(median(shown.plain))} ms (the events as one <pre>, for comparison)`,
      '',
    ].join('\n'));
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
