/**
 * Measures `manus eval` against the scripted model server answering every request after a fixed
 * 50 ms, with the 30-step no-op recipe (31 requests a run), as the batch benchmark does:
 *
 * - 200 rows × 2 models at concurrency 20 in one process, against the ideal of
 *   runs × 31 × 50 ms / 20; throughput is runs over the time from the first run's start to the
 *   last one's end, so process start-up is left out. Floor: 90% of the ideal.
 * - scoring: the eval's 400 runs scored again in this process with its seven built-in scorers
 *   (each run's events read for its tool calls and steps), in milliseconds a run. Floor: under 5.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEvalFile } from '../runtime/applications/eval/eval-file.js';
import { evalMatrix } from '../runtime/applications/eval/eval-matrix.js';
import { readRecordedItems } from '../runtime/applications/eval/eval-record.js';
import { scoreItems } from '../runtime/applications/eval/score-items.js';
import { noopAgentLines, noopPluginSource } from './no-op-agent.js';
import { watchCpuTime } from './process-figures.js';

const steps = 30;
const replyMs = 50;
const requestsPerRun = steps + 1;
const rows = Number(process.env.BENCH_EVAL_ROWS ?? 200);
const models = ['bench-a', 'bench-b'];
const concurrency = 20;
const cliEntry = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/bundle/main.js', import.meta.url));

function benchmarkFolder(): string {
  const folder = realpathSync(mkdtempSync(join(tmpdir(), 'manus-eval-bench-')));
  mkdirSync(join(folder, 'tools'));
  writeFileSync(join(folder, 'tools', 'noop.mjs'), noopPluginSource);
  writeFileSync(join(folder, 'bench.yaml'), [
    'version: 1',
    'name: eval-bench',
    'parameters:',
    '  name:',
    '    type: string',
    '    description: the row',
    'prompt: "Row {{name}}: call the noop tool until told otherwise."',
    'plugins: [./tools]',
    'agent:',
    ...noopAgentLines(steps + 5),
    '',
  ].join('\n'));
  writeFileSync(join(folder, 'rows.jsonl'), Array.from({ length: rows }, (_, index) => JSON.stringify({ id: `row-${index}`, parameters: { name: `row-${index}` }, expected: { answer: 'done', steps } })).join('\n') + '\n');
  writeFileSync(join(folder, 'bench.eval.yaml'), [
    'version: 1',
    'name: eval-bench',
    'recipe: bench.yaml',
    'dataset: rows.jsonl',
    'scorers:',
    '  - { type: equals, value: "{{expected.answer}}" }',
    '  - { type: includes, value: ["do", "ne"] }',
    '  - { type: regex, pattern: "^d.n[aeiou]$" }',
    '  - { type: tool_called, tool: noop }',
    '  - { type: tool_not_called, tool: bash }',
    '  - { type: max_steps, limit: 40 }',
    '  - { type: checks }',
    '',
  ].join('\n'));
  return folder;
}

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
  return { baseUrl, close: () => new Promise((resolve) => { child.once('exit', () => resolve()); child.stdin!.end(); }) };
}

const folder = benchmarkFolder();
const server = await startModel();
const lines: string[] = [];
try {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: folder,
    OPENAI_BASE_URL: server.baseUrl,
    OPENAI_API_KEY: 'bench',
    MANUS_CACHE_DIR: join(folder, 'cache'),
    XDG_CONFIG_HOME: join(folder, 'config'),
    NO_COLOR: '1',
  };
  const started = performance.now();
  const child = spawn(process.execPath, [cliEntry, 'eval', 'bench.eval.yaml', '--models', models.join(','), '--concurrency', String(concurrency), '--quiet', '--json'], { cwd: folder, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const cpu = watchCpuTime(child.pid);
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const wallMs = performance.now() - started;
  const cpuMs = cpu();
  if (code !== 0) throw new Error(`the eval failed with exit ${code}: ${stderr}`);
  const evals = join(folder, '.manus', 'evals');
  const directory = join(evals, readdirSync(evals)[0]);
  const records = readRecordedItems(directory);
  const runs = [...records.values()].filter((record) => record.status === 'success');
  const start = Math.min(...runs.map((run) => Date.parse(run.startedAt)));
  const end = Math.max(...runs.map((run) => Date.parse(run.startedAt) + run.durationMs));
  const ideal = (rows * models.length * requestsPerRun * replyMs) / concurrency;
  const share = ideal / (end - start);
  const record = JSON.parse(readFileSync(join(directory, 'eval.json'), 'utf8')) as { summary: Array<{ model: string; passed: number; runs: number }> };
  lines.push(
    `eval: ${rows} rows × ${models.length} models (${rows * models.length} runs of the ${steps}-step no-op recipe) at concurrency ${concurrency}, replies after ${replyMs} ms`,
    `  first run start to last run end: ${((end - start) / 1000).toFixed(2)} s; ideal (runs x ${requestsPerRun} x ${replyMs} ms / ${concurrency}): ${(ideal / 1000).toFixed(2)} s; ${(share * 100).toFixed(1)}% of ideal throughput (floor 90%) ${share >= 0.9 ? 'ok' : 'BELOW FLOOR'}`,
    `  whole command, start to exit (scoring and eval.json included): ${(wallMs / 1000).toFixed(2)} s; ${record.summary.map((summary) => `${summary.model} ${summary.passed}/${summary.runs} passed`).join(', ')}`,
    // The runs share one event loop: CPU a run times runs over the ideal is the share of one core it needs.
    `  CPU time of the eval process: ${cpuMs === undefined ? 'n/a' : `${(cpuMs / 1000).toFixed(2)} s, ${(cpuMs / runs.length).toFixed(1)} ms a run, ${(cpuMs / (runs.length * requestsPerRun)).toFixed(2)} ms a step: ${((cpuMs / ideal) * 100).toFixed(0)}% of one core over the ideal time`}`,
    `  machine load average when it ended: ${loadavg().map((value) => value.toFixed(2)).join(' ')} on ${availableParallelism()} cores`,
  );

  // Scoring alone, in this process, as --replay does it.
  const definition = await loadEvalFile(join(folder, 'bench.eval.yaml'));
  const matrix = evalMatrix(definition.rows, models, 1);
  const rounds = 3;
  let best = Infinity;
  for (let round = 0; round < rounds; round += 1) {
    const scoringStarted = performance.now();
    const scored = await scoreItems({ definition, matrix, records, runsBase: directory, cwd: folder });
    best = Math.min(best, performance.now() - scoringStarted);
    if (scored.size !== matrix.cells.length) throw new Error('not every run was scored');
  }
  const perRun = best / matrix.cells.length;
  lines.push(`  scoring: ${matrix.cells.length} runs × ${definition.scorers.length} scorers in ${best.toFixed(1)} ms (best of ${rounds}): ${perRun.toFixed(3)} ms a run (floor under 5 ms) ${perRun < 5 ? 'ok' : 'ABOVE FLOOR'}`);
} finally {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
}
process.stdout.write(`${lines.join('\n')}\n`);
