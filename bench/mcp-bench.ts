/**
 * Measures a tool call through a stdio MCP server as a run makes it, against a bare SDK client
 * calling the same tool on the same server. The runtime's side is a real in-process run (the
 * scripted chat model calls the test server's `echo` again and again); a call is the span from
 * its tool-call-start to its tool-call-end event. The bare side is the SDK's Client with its
 * StdioClientTransport, timed around `callTool`. The server is trusted (it runs on the host), so
 * both start the same process. The two alternate, round by round, so that a change in the
 * machine's speed affects both alike. Start-up (process start, connect, list tools) is measured
 * for both as well: for the run, from its run-start event to its mcp-server-ready event.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { executeRun } from '../runtime/runs/run.js';
import { callReply, ScriptedChatModel, terminateReply } from '../test/support/scripted-chat-model.js';
import '../test/support/public-api-setup.js';

const callsPerRound = Number(process.env.BENCH_CALLS ?? 40);
const rounds = Number(process.env.BENCH_REPETITIONS ?? 5);
const testServer = fileURLToPath(new URL('../test/support/mcp-test-server.mjs', import.meta.url));

interface RoundFigures {
  startupMs: number;
  callsMs: number[];
}

function benchmarkFolder(): string {
  const folder = realpathSync(mkdtempSync(join(tmpdir(), 'manus-mcp-bench-')));
  writeFileSync(join(folder, 'recipe.yaml'), [
    'version: 1',
    'name: mcp-bench',
    'prompt: Call the echo tool until told otherwise.',
    'mcp_servers:',
    '  bench:',
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [${JSON.stringify(testServer)}]`,
    'agent:',
    '  system_prompt: You are a benchmark agent.',
    '  tools: [mcp_bench_echo, terminate]',
    `  max_steps: ${callsPerRound + 5}`,
    '',
  ].join('\n'));
  writeFileSync(join(folder, 'agents.yaml'), 'version: 1\nllm:\n  default:\n    provider: openai-compatible\n');
  return folder;
}

async function runtimeRound(folder: string): Promise<RoundFigures> {
  const turns = Array.from({ length: callsPerRound }, (_, index) => callReply('mcp_bench_echo', { text: `call ${index}` }));
  const model = new ScriptedChatModel([...turns, terminateReply()]);
  // The user's own configuration stays out of the benchmark; `--trust mcp` puts the server on the host.
  const environment = { ...process.env, XDG_CONFIG_HOME: join(folder, 'no-user-config') };
  const plan = await resolveRecipe('recipe.yaml', { cwd: folder, overrides: { trust: ['mcp'] }, environment });
  const result = await executeRun(plan, { cwd: folder, environment, signal: new AbortController().signal, interactive: false, model });
  if (result.status !== 'success') throw new Error(`benchmark run ended with ${result.status}: ${result.answer}`);
  const events = readFileSync(join(result.runDirectory, 'events.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  const timeOf = (type: string) => Date.parse(events.find((event) => event.type === type).time);
  const calls = events.filter((event) => event.type === 'tool-call-end' && event.tool === 'mcp_bench_echo');
  if (calls.some((event) => event.isError)) throw new Error('an echo call through the run failed');
  return { startupMs: timeOf('mcp-server-ready') - timeOf('run-start'), callsMs: calls.map((event) => event.durationMs) };
}

async function bareRound(): Promise<RoundFigures> {
  const started = performance.now();
  const client = new Client({ name: 'bare-client', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [testServer], stderr: 'ignore' }));
  await client.listTools();
  const startupMs = performance.now() - started;
  const callsMs: number[] = [];
  try {
    for (let index = 0; index < callsPerRound; index += 1) {
      const callStarted = performance.now();
      const result = await client.callTool({ name: 'echo', arguments: { text: `call ${index}` } });
      callsMs.push(performance.now() - callStarted);
      if (result.isError) throw new Error('an echo call through the bare client failed');
    }
  } finally {
    await client.close();
  }
  return { startupMs, callsMs };
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const folder = benchmarkFolder();
try {
  // One of each first, not counted: modules load and code warms up.
  await runtimeRound(folder);
  await bareRound();
  const runtime: RoundFigures[] = [];
  const bare: RoundFigures[] = [];
  for (let round = 0; round < rounds; round += 1) {
    runtime.push(await runtimeRound(folder));
    bare.push(await bareRound());
  }
  const runtimeCall = median(runtime.flatMap((figures) => figures.callsMs));
  const bareCall = median(bare.flatMap((figures) => figures.callsMs));
  const runtimeStartup = median(runtime.map((figures) => figures.startupMs));
  const bareStartup = median(bare.map((figures) => figures.startupMs));
  const format = (value: number) => `${value.toFixed(3)} ms`;
  process.stdout.write([
    `MCP tool call over stdio, the test server's echo (median of ${rounds} alternating rounds of ${callsPerRound} calls each)`,
    `  through a run, tool-call-start to tool-call-end: ${format(runtimeCall)}`,
    `  bare SDK client, callTool: ${format(bareCall)}`,
    `  ratio: ${(runtimeCall / bareCall).toFixed(2)} times the bare client`,
    `server start-up, process start to tools listed (median of ${rounds})`,
    `  through a run, run-start to mcp-server-ready: ${runtimeStartup.toFixed(0)} ms`,
    `  bare SDK client, connect and listTools: ${format(bareStartup)}`,
    `  ratio: ${(runtimeStartup / bareStartup).toFixed(2)} times the bare client`,
    '',
  ].join('\n'));
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ runtimeCall, bareCall, callRatio: runtimeCall / bareCall, runtimeStartup, bareStartup, startupRatio: runtimeStartup / bareStartup })}\n`);
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
