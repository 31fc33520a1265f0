/**
 * One round of the loop benchmark for one build of the command, and the floor it is held to: the
 * 30-step no-op loop against the scripted model server, as `npm run bench` and
 * `npm run bench:compare` measure it. Each round starts every process fresh, so rounds of two
 * builds and of the floor can alternate and a change in the machine's speed affects all alike.
 *
 * - cold start: process start to the first model request, with the code cache an earlier start
 *   wrote; the floor is a Node process that only sends one request to the same server.
 * - first start: the same with an empty code cache, as after a fresh install.
 * - steps: request to request as the server sees them, against a bare Node loop sending the same
 *   request bodies, each once the reply before it has been read.
 * - peak resident memory and CPU time (user + system) of the whole run, and of that bare loop.
 * - TypeScript plugin: the cold start of the same agent with its tool in a .ts file, once with the
 *   plugin compiled by an earlier run and once with a new file in a new folder.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopPluginSource, noopRecipe, noopScript } from './no-op-agent.js';
import { watchCpuTime, watchPeakMemory } from './process-figures.js';
import { startScriptedModelServer, type RecordedChatRequest } from '../test/support/scripted-model-server.js';
import { bareRequestLoop } from './bare-request-loop.js';

export const steps = 30;

const typeScriptPlugin = (marker: string) =>
  `// ${marker}\nimport { defineTool } from 'manus-runtime';\nexport default defineTool<{ note: string }>({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] }, execute: ({ note }) => \`noted \${note}\` });\n`;

/** The figures of one round; every time in milliseconds, memory in MiB. */
export interface RoundFigures {
  coldStart: number;
  firstStart: number;
  /** Median of the round's steps 20 to 30, and of all its steps, request to request. */
  lateStep: number;
  allSteps: number;
  peakMemory?: number;
  cpuTime?: number;
  typeScriptColdStart: number;
  typeScriptFirstRun: number;
  /** The kernel's own share of a step: a reply's last byte to the next request, median of all steps. */
  kernelStep: number;
  stepOne: number;
}

export interface FloorFigures {
  coldStart: number;
  lateStep: number;
  allSteps: number;
  peakMemory?: number;
  cpuTime?: number;
}

interface ProcessRun {
  coldStart: number;
  requests: RecordedChatRequest[];
  peakMemory?: number;
  cpuTime?: number;
}

/** The folders and caches a build's rounds share; `close()` removes them. */
export class LoopBenchmark {
  private readonly scratch = mkdtempSync(join(tmpdir(), 'manus-bench-'));
  private readonly javaScriptFolder = this.benchmarkFolder('js', 'noop.mjs', noopPluginSource);
  private readonly typeScriptFolder = this.benchmarkFolder('ts', 'noop.ts', typeScriptPlugin('the plugin every cached run loads'));
  private readonly warmCache = join(this.scratch, 'cache-warm');
  private fresh = 0;
  /** The request bodies of the last run, for the floor to send. */
  lastBodies: unknown[] = [];

  constructor(private readonly cliEntry: string) {}

  /** Runs each case once so that the code cache and the plugin's compiled copy exist. */
  async warmUp(): Promise<void> {
    this.lastBodies = (await this.run(this.javaScriptFolder, this.warmCache)).requests.map((request) => request.body);
    await this.run(this.typeScriptFolder, this.warmCache);
  }

  async round(): Promise<RoundFigures> {
    const javaScript = await this.run(this.javaScriptFolder, this.warmCache);
    this.lastBodies = javaScript.requests.map((request) => request.body);
    const typeScript = await this.run(this.typeScriptFolder, this.warmCache);
    const newPluginFolder = this.benchmarkFolder(`ts-new-${(this.fresh += 1)}`, 'noop.ts', typeScriptPlugin(`a new plugin, never compiled: ${process.pid} ${this.fresh} ${Date.now()}`));
    const typeScriptFirst = await this.run(newPluginFolder, this.warmCache);
    // Last in the round: the cache it writes as it exits is disk work that would slow a start after it.
    const firstStart = await this.run(this.javaScriptFolder, join(this.scratch, `cache-empty-${this.fresh}`));
    const intervals = requestIntervals(javaScript.requests);
    const replyGaps = javaScript.requests.slice(1).map((request, index) => request.receivedAt - javaScript.requests[index].repliedAt!);
    return {
      coldStart: javaScript.coldStart,
      firstStart: firstStart.coldStart,
      lateStep: median(intervals.slice(19, steps)),
      allSteps: median(intervals),
      peakMemory: javaScript.peakMemory,
      cpuTime: javaScript.cpuTime,
      typeScriptColdStart: typeScript.coldStart,
      typeScriptFirstRun: typeScriptFirst.coldStart,
      kernelStep: median(replyGaps),
      stepOne: replyGaps[0],
    };
  }

  /** The first round's requests, to check the prompt sent per step. */
  async requestsOfOneRun(): Promise<RecordedChatRequest[]> {
    return (await this.run(this.javaScriptFolder, this.warmCache)).requests;
  }

  close(): void {
    rmSync(this.scratch, { recursive: true, force: true });
  }

  private benchmarkFolder(name: string, pluginFile: string, pluginSource: string): string {
    const folder = join(this.scratch, name);
    mkdirSync(join(folder, 'tools'), { recursive: true });
    writeFileSync(join(folder, 'tools', pluginFile), pluginSource);
    writeFileSync(join(folder, 'bench.yaml'), noopRecipe(steps));
    return folder;
  }

  private async run(folder: string, cacheFolder: string): Promise<ProcessRun> {
    const server = await startScriptedModelServer({ turns: noopScript(steps) });
    try {
      const started = performance.timeOrigin + performance.now();
      const child = spawn(process.execPath, [this.cliEntry, 'run', join(folder, 'bench.yaml'), '--quiet', '--json'], {
        cwd: folder,
        env: { ...process.env, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'bench', MANUS_MODEL: 'scripted-model', MANUS_CACHE_DIR: cacheFolder },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      const peakMemory = watchPeakMemory(child.pid);
      const cpuTime = watchCpuTime(child.pid);
      const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
      const figures = { peakMemory: peakMemory(), cpuTime: cpuTime() };
      if (exitCode !== 0) throw new Error(`benchmark run of ${this.cliEntry} failed with exit ${exitCode}: ${output}`);
      const requests = chatRequests(server.requests);
      return { coldStart: requests[0].receivedAt - started, requests, ...figures };
    } finally {
      await server.close();
    }
  }
}

/** One round of the floor: a Node process sending one request, and a bare loop sending `bodies`. */
export async function floorRound(bodies: unknown[]): Promise<FloorFigures> {
  const coldStart = await floorColdStart();
  const loop = await bareLoop(bodies);
  const intervals = requestIntervals(loop.requests);
  return { coldStart, lateStep: median(intervals.slice(19, steps)), allSteps: median(intervals), peakMemory: loop.peakMemory, cpuTime: loop.cpuTime };
}

async function floorColdStart(): Promise<number> {
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

async function bareLoop(bodies: unknown[]): Promise<ProcessRun> {
  const server = await startScriptedModelServer({ turns: noopScript(steps) });
  const folder = mkdtempSync(join(tmpdir(), 'manus-bench-floor-'));
  try {
    const loop = bareRequestLoop(folder, server.baseUrl, bodies);
    const started = performance.timeOrigin + performance.now();
    const child = spawn(process.execPath, ['-e', loop], { stdio: ['ignore', 'ignore', 'inherit'] });
    const peakMemory = watchPeakMemory(child.pid);
    const cpuTime = watchCpuTime(child.pid);
    await new Promise((resolve) => child.on('close', resolve));
    const requests = chatRequests(server.requests);
    return { coldStart: requests[0].receivedAt - started, requests, peakMemory: peakMemory(), cpuTime: cpuTime() };
  } finally {
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

export function chatRequests(requests: readonly unknown[]): RecordedChatRequest[] {
  return (requests as RecordedChatRequest[]).filter((request) => request.path.endsWith('/chat/completions'));
}

/** From one request's arrival to the next: the whole step, as the server sees it. */
export function requestIntervals(requests: RecordedChatRequest[]): number[] {
  return requests.slice(1).map((request, index) => request.receivedAt - requests[index].receivedAt);
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** A figure over rounds: its median, and the range the middle rounds fall in. */
export interface Summary {
  median: number;
  low: number;
  high: number;
}

/** Median and spread (the 25th to the 75th percentile) of the values that are defined; undefined when none is. */
export function summarise(values: ReadonlyArray<number | undefined>): Summary | undefined {
  const known = values.filter((value): value is number => value !== undefined).sort((left, right) => left - right);
  if (known.length === 0) return undefined;
  const position = (fraction: number) => fraction * (known.length - 1);
  return { median: median(known), low: known[Math.floor(position(0.25))], high: known[Math.ceil(position(0.75))] };
}

export function formatSummary(summary: Summary | undefined, unit: string, digits = 1): string {
  if (summary === undefined) return 'n/a';
  return `${summary.median.toFixed(digits)} ${unit} (${summary.low.toFixed(digits)}-${summary.high.toFixed(digits)})`;
}
