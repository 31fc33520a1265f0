/**
 * Measures the browser tool against the local fixture site: browser start-up, the time of each
 * kind of action (go_to_url, click_element, input_text, scroll_down, the state render) and the
 * size of the browser state sent to the model each step. Prints a table and, with --json, the
 * raw figures. Run with `npx tsx bench/browser-bench.ts`; BENCH_REPETITIONS sets the samples.
 */
import browserState from '../plugins/browser/browser_state.js';
import browserUse from '../plugins/browser/browser_use.js';
import type { ContextProviderInput } from '../runtime/contract/context-provider.js';
import { existingBrowserSession } from '../plugins/browser/session-registry.js';
import type { ToolResult } from '../runtime/contract/tool.js';
import { startFixtureSite } from '../test/support/fixture-site.js';
import { createTestToolContext } from '../test/support/tool-context.js';

const repetitions = Number(process.env.BENCH_REPETITIONS ?? 10);
const statePages = ['index.html', 'form.html', 'article.html', 'scroll.html', 'frames.html'];

type TestContext = ReturnType<typeof createTestToolContext>;

interface Figures {
  startMs: number[];
  actionMs: Record<string, number[]>;
  stateCharacters: Record<string, number>;
  stateWithListInResults: Record<string, number>;
}

async function act(test: TestContext, input: Record<string, unknown>): Promise<ToolResult> {
  const result = (await browserUse.execute(input as never, test.context)) as ToolResult;
  if (result.isError) throw new Error(`${JSON.stringify(input)} failed: ${result.content}`);
  return result;
}

function renderInput(test: TestContext): ContextProviderInput {
  return {
    runId: 'bench',
    workspace: test.context.workspace,
    runDirectory: test.context.runDirectory,
    step: 1,
    recentTools: new Set(['browser_use']),
    resources: test.context.resources,
    signal: new AbortController().signal,
    vision: false,
    settings: {},
  };
}

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const value = await work();
  return [performance.now() - started, value];
}

async function measureStart(origin: string, figures: Figures): Promise<void> {
  for (let round = 0; round < Math.max(3, Math.ceil(repetitions / 3)); round += 1) {
    const test = createTestToolContext();
    try {
      const [milliseconds] = await timed(() => act(test, { action: 'go_to_url', url: 'about:blank' }));
      figures.startMs.push(milliseconds);
      await act(test, { action: 'go_to_url', url: `${origin}/index.html` });
    } finally {
      await test.dispose();
    }
  }
}

async function measureActions(origin: string, figures: Figures): Promise<void> {
  const test = createTestToolContext();
  const record = (name: string, milliseconds: number) => (figures.actionMs[name] ??= []).push(milliseconds);
  try {
    await browserState.render(renderInput(test));
    await act(test, { action: 'go_to_url', url: `${origin}/index.html` });
    for (let round = 0; round < repetitions; round += 1) {
      record('go_to_url', (await timed(() => act(test, { action: 'go_to_url', url: `${origin}/form.html` })))[0]);
      record('state render', (await timed(async () => browserState.render(renderInput(test))))[0]);
      record('input_text', (await timed(() => act(test, { action: 'input_text', index: 1, text: `Visitor ${round}` })))[0]);
      record('click_element (no navigation)', (await timed(() => act(test, { action: 'click_element', index: 6 })))[0]);
      record('click_element (navigates)', (await timed(() => act(test, { action: 'click_element', index: 7 })))[0]);
      await act(test, { action: 'go_to_url', url: `${origin}/scroll.html` });
      record('scroll_down', (await timed(() => act(test, { action: 'scroll_down' })))[0]);
    }
  } finally {
    await test.dispose();
  }
}

async function measureStateSizes(origin: string, figures: Figures): Promise<void> {
  const withProvider = createTestToolContext();
  const withoutProvider = createTestToolContext();
  try {
    await browserState.render(renderInput(withProvider));
    for (const page of statePages) {
      await act(withProvider, { action: 'go_to_url', url: `${origin}/${page}` });
      const state = await browserState.render(renderInput(withProvider));
      figures.stateCharacters[page] = state?.text?.length ?? 0;
      const result = await act(withoutProvider, { action: 'go_to_url', url: `${origin}/${page}` });
      figures.stateWithListInResults[page] = result.content.length;
    }
    if (!existingBrowserSession(withProvider.context.resources)) throw new Error('the browser did not start');
  } finally {
    await withProvider.dispose();
    await withoutProvider.dispose();
  }
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

function row(name: string, values: number[]): string {
  const format = (value: number) => value.toFixed(1).padStart(8);
  return `${name.padEnd(32)}${format(percentile(values, 0.5))}${format(percentile(values, 0.9))}${format(Math.min(...values))}`;
}

const site = await startFixtureSite();
const figures: Figures = { startMs: [], actionMs: {}, stateCharacters: {}, stateWithListInResults: {} };
try {
  await measureStart(site.origin, figures);
  await measureActions(site.origin, figures);
  await measureStateSizes(site.origin, figures);
} finally {
  await site.close();
}

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(figures, null, 2));
} else {
  console.log(`Browser benchmark (${repetitions} repetitions; milliseconds)`);
  console.log(`${''.padEnd(32)}${'median'.padStart(8)}${'p90'.padStart(8)}${'min'.padStart(8)}`);
  console.log(row('browser start + first page', figures.startMs));
  for (const [name, values] of Object.entries(figures.actionMs)) console.log(row(name, values));
  console.log('\nBrowser state per step (characters): state provider | result with the list (no provider)');
  for (const page of statePages) {
    console.log(`${page.padEnd(32)}${String(figures.stateCharacters[page]).padStart(8)} | ${String(figures.stateWithListInResults[page]).padStart(8)}`);
  }
}
