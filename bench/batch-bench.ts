/**
 * Measures batches against the scripted model server answering every request after a fixed
 * 50 ms, with the 30-step no-op recipe (31 requests an item):
 *
 * - one process: 200 items at concurrency 20, against the ideal of items x 31 x 50 ms / 20, with
 *   the process's peak memory, and the memory each concurrent run adds (against the same batch
 *   at concurrency 1);
 * - a queue on a local redis-server: one worker at concurrency 5, then four at concurrency 5,
 *   each against its ideal, in turns; throughput is items over the time from the first item's
 *   start to the last one's end, so process start-up is left out.
 *
 * The model runs in a process of its own, as a remote model would. Floors: at least 90% of the
 * ideal in one process, and four workers at least 3.5 times one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redisMissing, startRedis, type RedisServer } from '../test/support/redis-server.js';
import { watchCpuTime, watchPeakMemory } from './process-figures.js';
import { noopAgentLines, noopPluginSource } from './no-op-agent.js';

const steps = 30;
const replyMs = 50;
const requestsPerItem = steps + 1;
const cliEntry = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/bundle/main.js', import.meta.url));
const embeddedItems = Number(process.env.BENCH_BATCH_ITEMS ?? 200);
const embeddedConcurrency = 20;
const queueItems = Number(process.env.BENCH_QUEUE_ITEMS ?? 100);
const workerConcurrency = 5;

function benchmarkFolder(items: number): string {
  const folder = realpathSync(mkdtempSync(join(tmpdir(), 'manus-batch-bench-')));
  mkdirSync(join(folder, 'tools'));
  writeFileSync(join(folder, 'tools', 'noop.mjs'), noopPluginSource);
  writeFileSync(join(folder, 'bench.yaml'), [
    'version: 1',
    'name: batch-bench',
    'parameters:',
    '  name:',
    '    type: string',
    '    description: the item',
    'prompt: "Item {{name}}: call the noop tool until told otherwise."',
    'plugins: [./tools]',
    'agent:',
    ...noopAgentLines(steps + 5),
    '',
  ].join('\n'));
  writeFileSync(join(folder, 'items.jsonl'), Array.from({ length: items }, (_, index) => JSON.stringify({ name: `item-${index}` })).join('\n') + '\n');
  return folder;
}

/** The model, in a process of its own (bench/no-op-model.ts): a remote model does not share the batch's machine time. */
async function startModel(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./no-op-model.ts', import.meta.url))], {
    env: { ...process.env, STEPS: String(steps), REPLY_MS: String(replyMs) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('\n')) resolve(output.split('\n')[0]);
    });
    child.once('exit', (code) => reject(new Error(`the model process exited with ${code}`)));
  });
  return {
    baseUrl,
    close: () => new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.stdin!.end();
    }),
  };
}

function environment(server: { baseUrl: string }, home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    OPENAI_BASE_URL: server.baseUrl,
    OPENAI_API_KEY: 'bench',
    MANUS_MODEL: 'scripted-model',
    MANUS_CACHE_DIR: join(home, 'cache'),
    XDG_CONFIG_HOME: join(home, 'config'),
    NO_COLOR: '1',
  };
}

interface BatchFigures {
  /** From the first item's start to the last item's end. */
  spanMs: number;
  wallMs: number;
  peakMemoryMb?: number;
  /** CPU time the batch process used, user and system. */
  cpuMs?: number;
  items: number;
}

function spawnCli(args: string[], cwd: string, env: Record<string, string>): { child: ChildProcess; closed: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [cliEntry, ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return { child, closed: new Promise((resolve) => child.on('close', resolve)), stderr: () => stderr };
}

/** The lines of items that did not succeed, to say why a batch failed. */
function failedItems(folder: string): string {
  const root = join(folder, '.manus', 'batches');
  const [batch] = readdirSync(root);
  return readFileSync(join(root, batch, 'items.jsonl'), 'utf8').split('\n').filter((line) => line !== '' && !/"status":"(success|running)"/.test(line)).join('\n');
}

/** The span of the finished items, from the batch folder. */
function itemSpan(folder: string): { spanMs: number; items: number } {
  const root = join(folder, '.manus', 'batches');
  const [batch] = readdirSync(root);
  const lines = readFileSync(join(root, batch, 'items.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { status: string; startedAt: string; durationMs: number });
  const finished = lines.filter((line) => line.status === 'success');
  const start = Math.min(...finished.map((line) => Date.parse(line.startedAt)));
  const end = Math.max(...finished.map((line) => Date.parse(line.startedAt) + line.durationMs));
  return { spanMs: end - start, items: finished.length };
}

async function embeddedBatch(items: number, concurrency: number): Promise<BatchFigures> {
  const folder = benchmarkFolder(items);
  const server = await startModel();
  try {
    const started = performance.now();
    const batch = spawnCli(['batch', 'bench.yaml', '--inputs', 'items.jsonl', '--concurrency', String(concurrency), '--quiet'], folder, environment(server, folder));
    const peak = watchPeakMemory(batch.child.pid);
    const cpu = watchCpuTime(batch.child.pid);
    const code = await batch.closed;
    const peakMemoryMb = peak();
    const cpuMs = cpu();
    if (code !== 0) throw new Error(`the batch failed with exit ${code}: ${batch.stderr()}\n${failedItems(folder)}`);
    return { ...itemSpan(folder), wallMs: performance.now() - started, peakMemoryMb, cpuMs };
  } finally {
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function queuedBatch(redis: RedisServer, workers: number): Promise<BatchFigures> {
  const folder = benchmarkFolder(queueItems);
  const server = await startModel();
  const running = Array.from({ length: workers }, (_, index) => {
    const home = join(folder, `worker-${index}`);
    mkdirSync(home);
    return spawnCli(['worker', '--queue', redis.url, '--concurrency', String(workerConcurrency)], home, environment(server, home));
  });
  try {
    // Every worker waits for jobs before the batch adds them.
    const ready = Date.now();
    while (!running.every((worker) => worker.stderr().includes('taking items'))) {
      if (Date.now() - ready > 30_000) throw new Error(`workers did not start: ${running.map((worker) => worker.stderr()).join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const started = performance.now();
    const batch = spawnCli(['batch', 'bench.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--quiet'], folder, environment(server, folder));
    const code = await batch.closed;
    if (code !== 0) throw new Error(`the queued batch failed with exit ${code}: ${batch.stderr()}\n${failedItems(folder)}`);
    return { ...itemSpan(folder), wallMs: performance.now() - started };
  } finally {
    for (const worker of running) worker.child.kill('SIGTERM');
    await Promise.all(running.map((worker) => worker.closed));
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

const seconds = (milliseconds: number) => `${(milliseconds / 1000).toFixed(2)} s`;
const lines: string[] = [];

const ideal = (embeddedItems * requestsPerItem * replyMs) / embeddedConcurrency;
const embedded = await embeddedBatch(embeddedItems, embeddedConcurrency);
const single = await embeddedBatch(3, 1);
const share = embedded.spanMs > 0 ? ideal / embedded.spanMs : 0;
const perRun = embedded.peakMemoryMb !== undefined && single.peakMemoryMb !== undefined ? (embedded.peakMemoryMb - single.peakMemoryMb) / (embeddedConcurrency - 1) : undefined;
lines.push(
  `one process: ${embeddedItems} items of the ${steps}-step no-op recipe at concurrency ${embeddedConcurrency}, replies after ${replyMs} ms`,
  `  first item start to last item end: ${seconds(embedded.spanMs)}; ideal (items x ${requestsPerItem} x ${replyMs} ms / ${embeddedConcurrency}): ${seconds(ideal)}; ${(share * 100).toFixed(1)}% of ideal throughput (floor 90%) ${share >= 0.9 ? 'ok' : 'BELOW FLOOR'}`,
  `  whole command, process start to exit: ${seconds(embedded.wallMs)}; CPU time of the batch process ${embedded.cpuMs === undefined ? 'n/a' : `${seconds(embedded.cpuMs)}, ${(embedded.cpuMs / (embeddedItems * requestsPerItem)).toFixed(2)} ms a step`}`,
  `  machine load average when it ended: ${loadavg().map((value) => value.toFixed(2)).join(' ')} on ${availableParallelism()} cores`,
  `  peak resident memory: ${embedded.peakMemoryMb?.toFixed(1) ?? 'n/a'} MB at concurrency ${embeddedConcurrency}, ${single.peakMemoryMb?.toFixed(1) ?? 'n/a'} MB at concurrency 1: ${perRun === undefined ? 'n/a' : `${perRun.toFixed(1)} MB`} per concurrent run`,
);

const unavailable = redisMissing();
if (unavailable) {
  lines.push(`queue: skipped, ${unavailable}`);
} else {
  const redis = await startRedis();
  try {
    const one: BatchFigures[] = [];
    const four: BatchFigures[] = [];
    // In turns, so a change in the machine's load falls on both alike.
    for (let round = 0; round < Number(process.env.BENCH_QUEUE_ROUNDS ?? 2); round += 1) {
      one.push(await queuedBatch(redis, 1));
      four.push(await queuedBatch(redis, 4));
    }
    const throughput = (figures: BatchFigures[]) => Math.max(...figures.map((figure) => figure.items / (figure.spanMs / 1000)));
    const idealOne = workerConcurrency / ((requestsPerItem * replyMs) / 1000);
    const oneRate = throughput(one);
    const fourRate = throughput(four);
    const ratio = fourRate / oneRate;
    lines.push(
      `queue on a local redis-server: ${queueItems} items, workers at concurrency ${workerConcurrency} (best of ${one.length} rounds, in turns)`,
      `  one worker: ${oneRate.toFixed(2)} items/s; ideal ${idealOne.toFixed(2)} items/s (${((oneRate / idealOne) * 100).toFixed(1)}%); spans ${one.map((figure) => seconds(figure.spanMs)).join(', ')}`,
      `  four workers: ${fourRate.toFixed(2)} items/s; ideal ${(4 * idealOne).toFixed(2)} items/s (${((fourRate / (4 * idealOne)) * 100).toFixed(1)}%); spans ${four.map((figure) => seconds(figure.spanMs)).join(', ')}`,
      `  four workers / one worker: ${ratio.toFixed(2)}x (floor 3.5x) ${ratio >= 3.5 ? 'ok' : 'BELOW FLOOR'}`,
      `  machine load average when it ended: ${loadavg().map((value) => value.toFixed(2)).join(' ')} on ${availableParallelism()} cores`,
    );
  } finally {
    await redis.stop();
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
