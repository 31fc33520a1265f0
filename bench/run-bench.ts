/**
 * Measures the kernel against the scripted model server: cold start (process start to first
 * model request), the kernel's own time per step (a reply's last byte to the next request), and
 * the prompt sent per step over a 30-step run with a no-op tool. Prints a table and, with --json,
 * the raw figures.
 *
 * Cold start is measured three ways: a start with the code cache an earlier start wrote, and the
 * floor, a Node process that only sends one request to the same server, in turns so that a change
 * in the machine's speed affects both alike; then a few first starts, each with an empty cache.
 * The step has a floor too: a Node process that sends the kernel's recorded requests in a plain
 * loop, each as soon as the last reply has been read, also in turns with the kernel's runs.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noopAgentLines, noopPluginSource } from './no-op-agent.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedTurn } from '../test/support/scripted-model-server.js';
import { TokenCounter } from '../runtime/services/model/token-counter.js';
import { watchPeakMemory } from './process-figures.js';
import type { ChatMessage } from '../runtime/contract/tool.js';

const steps = 30;
const repetitions = Number(process.env.BENCH_REPETITIONS ?? 7);
const cliEntry = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/bundle/main.js', import.meta.url));

interface RunFigures {
  coldStartMs: number;
  stepGapsMs: number[];
  requests: RecordedChatRequest[];
  /** The process's peak resident memory, where the system tells it (Linux). */
  peakMemoryMb?: number;
}

function benchmarkFolder(pluginExtension: 'mjs' | 'ts'): string {
  const folder = mkdtempSync(join(tmpdir(), 'manus-bench-'));
  mkdirSync(join(folder, 'tools'));
  const plugin = pluginExtension === 'ts'
    ? "import { defineTool } from 'manus-runtime';\nexport default defineTool<{ note: string }>({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] }, execute: ({ note }) => `noted ${note}` });\n"
    : noopPluginSource;
  writeFileSync(join(folder, 'tools', `noop.${pluginExtension}`), plugin);
  writeFileSync(join(folder, 'bench.yaml'), [
    'version: 1',
    'name: bench',
    'prompt: Call the noop tool until told otherwise.',
    'plugins: [./tools]',
    'agent:',
    ...noopAgentLines(steps + 5),
    '',
  ].join('\n'));
  return folder;
}

function script(): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let step = 1; step <= steps; step += 1) {
    turns.push({ content: `Step ${step}.`, toolCalls: [{ name: 'noop', arguments: { note: `step ${step}` } }] });
  }
  turns.push({ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] });
  return turns;
}

async function runOnce(folder: string, cacheFolder: string): Promise<RunFigures> {
  const server = await startScriptedModelServer({ turns: script() });
  try {
    const started = performance.timeOrigin + performance.now();
    const child = spawn(process.execPath, [cliEntry, 'run', join(folder, 'bench.yaml'), '--quiet', '--json'], {
      cwd: folder,
      env: { ...process.env, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'bench', MANUS_MODEL: 'scripted-model', MANUS_CACHE_DIR: cacheFolder },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    const peakMemory = watchPeakMemory(child.pid);
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const peakMemoryMb = peakMemory();
    if (exitCode !== 0) throw new Error(`benchmark run failed with exit ${exitCode}: ${output}`);
    const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
    const stepGapsMs = requests.slice(1).map((request, index) => request.receivedAt - requests[index].repliedAt!);
    return { coldStartMs: requests[0].receivedAt - started, stepGapsMs, requests, peakMemoryMb };
  } finally {
    await server.close();
  }
}

/** Process start to first request for a Node process that does nothing else. */
async function floorOnce(): Promise<number> {
  const server = await startScriptedModelServer({ turns: [{ content: 'done' }] });
  try {
    const started = performance.timeOrigin + performance.now();
    const request = `fetch(${JSON.stringify(`${server.baseUrl}/chat/completions`)}, { method: 'POST', body: '{}' }).then((response) => response.text())`;
    const child = spawn(process.execPath, ['-e', request], { stdio: 'ignore' });
    await new Promise((resolve) => child.on('close', resolve));
    return server.requests[0].receivedAt - started;
  } finally {
    await server.close();
  }
}

/**
 * The time per step of a bare client: a Node process sending the same request bodies in a plain
 * loop, each once the reply before it has been read to the end. A step is the time from one
 * request reaching the server to the next, for the floor and the kernel alike.
 */
async function stepFloorOnce(bodies: unknown[]): Promise<number[]> {
  const server = await startScriptedModelServer({ turns: script() });
  const folder = mkdtempSync(join(tmpdir(), 'manus-bench-floor-'));
  try {
    const bodiesFile = join(folder, 'bodies.json');
    writeFileSync(bodiesFile, JSON.stringify(bodies));
    const loop = [
      "const { readFileSync } = require('node:fs');",
      `const bodies = JSON.parse(readFileSync(${JSON.stringify(bodiesFile)}, 'utf8'));`,
      '(async () => {',
      '  for (const body of bodies) {',
      `    const response = await fetch(${JSON.stringify(`${server.baseUrl}/chat/completions`)}, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer bench' }, body: JSON.stringify(body) });`,
      '    await response.text();',
      '  }',
      '})();',
    ].join('\n');
    const child = spawn(process.execPath, ['-e', loop], { stdio: ['ignore', 'ignore', 'inherit'] });
    await new Promise((resolve) => child.on('close', resolve));
    return requestIntervals(server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[]);
  } finally {
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** From one request's arrival to the next: the whole step, as the server sees it. */
function requestIntervals(requests: RecordedChatRequest[]): number[] {
  return requests.slice(1).map((request, index) => request.receivedAt - requests[index].receivedAt);
}

/** The median step from step 20 to step 30, where a long run spends its time. */
function lateSteps(intervals: number[][]): number {
  return median(intervals.flatMap((run) => run.slice(19, steps)));
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function promptFigures(requests: RecordedChatRequest[]) {
  const counter = new TokenCounter('gpt-4o');
  const tokens = requests.map((request) => counter.countMessages(request.body.messages as ChatMessage[]));
  const characters = requests.map((request) => JSON.stringify(request.body.messages).length);
  // History must be a prefix of the next request's history: nothing re-sent, nothing rewritten.
  let appendOnly = true;
  for (let index = 1; index < requests.length; index += 1) {
    const previous = requests[index - 1].body.messages as ChatMessage[];
    const current = requests[index].body.messages as ChatMessage[];
    const kept = previous.slice(0, -1);
    if (JSON.stringify(current.slice(0, kept.length)) !== JSON.stringify(kept)) appendOnly = false;
  }
  return { tokens, characters, appendOnly };
}

async function measure(label: string, pluginExtension: 'mjs' | 'ts') {
  const folder = benchmarkFolder(pluginExtension);
  const cacheFolders: string[] = [];
  const freshCacheFolder = () => {
    cacheFolders.push(mkdtempSync(join(tmpdir(), 'manus-bench-cache-')));
    return cacheFolders[cacheFolders.length - 1];
  };
  try {
    const warmCache = freshCacheFolder();
    await runOnce(folder, warmCache);
    const runs: RunFigures[] = [];
    const firstStarts: number[] = [];
    const floors: number[] = [];
    const stepFloors: number[][] = [];
    for (let repetition = 0; repetition < repetitions; repetition += 1) {
      runs.push(await runOnce(folder, warmCache));
      floors.push(await floorOnce());
      stepFloors.push(await stepFloorOnce(runs[runs.length - 1].requests.map((request) => request.body)));
    }
    // Apart from the others: each first start writes a cache as it exits, and that disk work
    // would slow whichever start came next.
    for (let repetition = 0; repetition < Math.min(repetitions, 5); repetition += 1) {
      firstStarts.push((await runOnce(folder, freshCacheFolder())).coldStartMs);
    }
    const coldStart = median(runs.map((run) => run.coldStartMs));
    const firstStart = median(firstStarts);
    const floor = median(floors);
    const stepOne = median(runs.map((run) => run.stepGapsMs[0]));
    const stepThirty = median(runs.map((run) => run.stepGapsMs[steps - 1]));
    const allSteps = median(runs.flatMap((run) => run.stepGapsMs));
    const lateStep = lateSteps(runs.map((run) => requestIntervals(run.requests)));
    const lateStepFloor = lateSteps(stepFloors);
    const fastestColdStart = Math.min(...runs.map((run) => run.coldStartMs));
    const fastestFloor = Math.min(...floors);
    const prompt = promptFigures(runs[0].requests);
    const memory = runs.flatMap((run) => (run.peakMemoryMb === undefined ? [] : [run.peakMemoryMb]));
    const peakMemoryMb = memory.length > 0 ? median(memory) : undefined;
    return { label, coldStart, firstStart, floor, fastestColdStart, fastestFloor, stepOne, stepThirty, allSteps, lateStep, lateStepFloor, peakMemoryMb, prompt };
  } finally {
    rmSync(folder, { recursive: true, force: true });
    for (const cacheFolder of cacheFolders) rmSync(cacheFolder, { recursive: true, force: true });
  }
}

const results = [await measure('plain JavaScript plugin', 'mjs'), await measure('TypeScript plugin (jiti)', 'ts')];
const format = (value: number) => `${value.toFixed(2)} ms`;
for (const result of results) {
  const { tokens, characters, appendOnly } = result.prompt;
  const growth = tokens.slice(1).map((count, index) => count - tokens[index]);
  process.stdout.write([
    `${result.label} (median of ${repetitions} runs, ${steps} no-op steps)`,
    `  cold start, process start to first model request: ${format(result.coldStart)} (first start, no code cache yet: ${format(result.firstStart)}; Node sending one request and nothing else: ${format(result.floor)})`,
    `  fastest cold start ${format(result.fastestColdStart)}, fastest floor ${format(result.fastestFloor)}: ${(result.fastestColdStart / result.fastestFloor).toFixed(2)} times the floor`,
    `  kernel time per step, reply to next request: step 1 ${format(result.stepOne)}, step ${steps} ${format(result.stepThirty)}, median of all steps ${format(result.allSteps)}`,
    `  whole step, request to request, median of steps 20-${steps}: ${format(result.lateStep)}; a bare request loop sending the same requests: ${format(result.lateStepFloor)}; ${(result.lateStep / result.lateStepFloor).toFixed(2)} times the floor`,
    `  prompt tokens sent: step 1 ${tokens[0]}, step ${steps} ${tokens[steps - 1]}; growth per step ${Math.min(...growth)}-${Math.max(...growth)} tokens (the new assistant turn and tool result)`,
    `  prompt characters sent: step 1 ${characters[0]}, step ${steps} ${characters[steps - 1]}; history append-only: ${appendOnly ? 'yes' : 'NO'}`,
    `  peak resident memory over the run: ${result.peakMemoryMb === undefined ? 'not available on this system' : `${result.peakMemoryMb.toFixed(1)} MB`}`,
    '',
  ].join('\n'));
}
if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(results.map(({ prompt, ...rest }) => ({ ...rest, promptTokens: prompt.tokens })))}\n`);
