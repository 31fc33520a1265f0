/**
 * Measures the flow engine against the single-agent loop, with the built command and the scripted
 * model server:
 *
 * - The engine's cost per step: the 30-step no-op run as a recipe with `agent:` and as a one-step
 *   flow, in turns; the kernel's time per step is a reply's last byte to the next request.
 * - Fan-out: a `parallel` step of 8 no-op agents against a model that answers after a fixed
 *   latency, against the same flow with one agent, in turns; the time is from the first request
 *   to the last reply, as the server sees it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noopAgentLines, noopPluginSource } from './no-op-agent.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedTurn } from '../test/support/scripted-model-server.js';

const steps = 30;
const repetitions = Number(process.env.BENCH_REPETITIONS ?? 7);
const fanOut = 8;
const fanOutSteps = 3;
const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 200);
const cliEntry = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/bundle/main.js', import.meta.url));

const recipes: Record<string, string[]> = {
  agent: ['name: bench', 'prompt: Call the noop tool until told otherwise.', 'agent:', ...noopAgentLines(steps + 5)],
  'one-step-flow': ['name: bench', 'flow:', '  - name: work', '    kind: agent', '    prompt: Call the noop tool until told otherwise.', '    agent:', ...noopAgentLines(steps + 5, 6)],
  'fan-out': fanOutRecipe(fanOut),
  'fan-out-of-one': fanOutRecipe(1),
};

function fanOutRecipe(branches: number): string[] {
  return [
    'name: bench-fan-out',
    'parameters:',
    `  items: { type: list, default: ${JSON.stringify(Array.from({ length: branches }, (_, index) => `item ${index + 1}`))} }`,
    'flow:',
    '  - name: fan',
    '    kind: parallel',
    '    for_each: "{{items}}"',
    `    max_concurrency: ${fanOut}`,
    '    step:',
    '      kind: agent',
    '      prompt: "Call the noop tool for {{item}} until told otherwise."',
    '      agent:',
    ...noopAgentLines(steps + 5, 8),
  ];
}

function benchmarkFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'manus-flow-bench-'));
  mkdirSync(join(folder, 'tools'));
  writeFileSync(join(folder, 'tools', 'noop.mjs'), noopPluginSource);
  for (const [name, lines] of Object.entries(recipes)) {
    writeFileSync(join(folder, `${name}.yaml`), ['version: 1', 'plugins: [./tools]', ...lines, ''].join('\n'));
  }
  return folder;
}

/** Each conversation calls noop until it has `calls` results, then terminates. */
function answerer(calls: number, delayMs: number) {
  return (request: RecordedChatRequest): ScriptedTurn => {
    const results = (request.body.messages as Array<{ role: string }>).filter((message) => message.role === 'tool').length;
    if (results < calls) return { delayMs, content: `Step ${results + 1}.`, toolCalls: [{ name: 'noop', arguments: { note: `step ${results + 1}` } }] };
    return { delayMs, toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] };
  };
}

async function runOnce(folder: string, recipe: string, calls: number, delayMs: number): Promise<RecordedChatRequest[]> {
  const server = await startScriptedModelServer({ turns: [], sideTurn: answerer(calls, delayMs) });
  try {
    const child = spawn(process.execPath, [cliEntry, 'run', join(folder, `${recipe}.yaml`), '--quiet', '--json'], {
      cwd: folder,
      env: { ...process.env, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'bench', MANUS_MODEL: 'scripted-model', MANUS_CACHE_DIR: join(folder, 'cache') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (exitCode !== 0) throw new Error(`${recipe} failed with exit ${exitCode}: ${output}`);
    return server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
  } finally {
    await server.close();
  }
}

/** A reply's last byte to the next request of the same run: the kernel's own time per step. */
function kernelStepGaps(requests: RecordedChatRequest[]): number[] {
  return requests.slice(1).map((request, index) => request.receivedAt - requests[index].repliedAt!);
}

function wallTime(requests: RecordedChatRequest[]): number {
  return Math.max(...requests.map((request) => request.repliedAt!)) - Math.min(...requests.map((request) => request.receivedAt));
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const format = (value: number) => `${value.toFixed(2)} ms`;
const folder = benchmarkFolder();
try {
  // A first run of each writes the code cache; it is not counted.
  for (const recipe of Object.keys(recipes)) await runOnce(folder, recipe, recipe.startsWith('fan') ? fanOutSteps - 1 : steps, 0);

  const agentGaps: number[][] = [];
  const flowGaps: number[][] = [];
  for (let repetition = 0; repetition < repetitions; repetition += 1) {
    agentGaps.push(kernelStepGaps(await runOnce(folder, 'agent', steps, 0)));
    flowGaps.push(kernelStepGaps(await runOnce(folder, 'one-step-flow', steps, 0)));
  }
  const agentStep = median(agentGaps.flat());
  const flowStep = median(flowGaps.flat());
  const perRunAgent = agentGaps.map((gaps) => median(gaps));
  const perRunFlow = flowGaps.map((gaps) => median(gaps));

  const single: number[] = [];
  const many: number[] = [];
  for (let repetition = 0; repetition < repetitions; repetition += 1) {
    single.push(wallTime(await runOnce(folder, 'fan-out-of-one', fanOutSteps - 1, latencyMs)));
    many.push(wallTime(await runOnce(folder, 'fan-out', fanOutSteps - 1, latencyMs)));
  }
  const ratio = median(many) / median(single);

  process.stdout.write([
    `flow engine per step (${repetitions} runs of each, ${steps} no-op steps, in turns)`,
    `  kernel time per step, reply to next request, median: agent recipe ${format(agentStep)}, one-step flow ${format(flowStep)}; the flow adds ${format(flowStep - agentStep)} per step (limit 1 ms)`,
    `  per-run medians: agent ${perRunAgent.map((value) => value.toFixed(2)).join(', ')}; flow ${perRunFlow.map((value) => value.toFixed(2)).join(', ')}`,
    `fan-out (${repetitions} runs of each, ${fanOutSteps} model calls per agent, ${latencyMs} ms model latency, in turns)`,
    `  first request to last reply, median: one agent ${format(median(single))}, ${fanOut} agents at once ${format(median(many))}; ${ratio.toFixed(2)} times one (limit 1.5)`,
    `  per run: one ${single.map((value) => value.toFixed(0)).join(', ')}; ${fanOut} ${many.map((value) => value.toFixed(0)).join(', ')}`,
    '',
  ].join('\n'));
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify({ agentStep, flowStep, single, many, ratio })}\n`);
} finally {
  rmSync(folder, { recursive: true, force: true });
}
