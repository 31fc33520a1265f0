/**
 * What a TypeScript plugin costs at start-up: process start to the first model request, in
 * alternating rounds of
 * - the floor: a Node process that sends one request and does nothing else (as in run-bench.ts);
 * - a run whose plugin is plain JavaScript;
 * - a first run of a new TypeScript plugin: a text no run has compiled, in a new folder, as when a
 *   user has just written `plugins/mytool.ts`;
 * - a first run of a copy of a TypeScript plugin compiled before, in a new folder;
 * - a second run in that folder.
 * Every run shares one cache folder, so the runtime's own start-up code cache is warm and only the
 * plugin differs. Ends with a pass/fail line: a new TypeScript plugin's first run at most 1.6 times
 * the floor, a later run within 10% of the JavaScript plugin's; exits 1 when one is missed.
 * Where GNU time is installed, each process's CPU time (user + sys, its children included: esbuild's
 * compilation too) is shown beside, as a mean: on a busy machine it varies far less than wall time.
 * With BENCH_BASELINE_CLI (another build's dist/bundle/main.js), the three TypeScript runs are also
 * measured with that build in the same rounds, each build with a cache folder of its own.
 *
 *   npm run bench:plugin-load [-- --rounds 9]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noopAgentLines, noopPluginSource } from './no-op-agent.js';
import { startScriptedModelServer, type ScriptedTurn } from '../test/support/scripted-model-server.js';
import { median } from './loop-measurements.js';

const roundsFlag = process.argv.indexOf('--rounds');
const rounds = roundsFlag > 0 ? Number(process.argv[roundsFlag + 1]) : Number(process.env.BENCH_REPETITIONS ?? 7);
const cliEntry = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/bundle/main.js', import.meta.url));
const baselineCli = process.env.BENCH_BASELINE_CLI;

const typeScriptPlugin = (marker: string) =>
  `import { defineTool } from 'manus-runtime';\n// ${marker}\ninterface Input { note: string }\nexport default defineTool<Input>({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] }, execute: ({ note }: Input) => \`noted \${note}\` });\n`;

const script: ScriptedTurn[] = [
  { toolCalls: [{ name: 'noop', arguments: { note: 'once' } }] },
  { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] },
];

/** One process: start to first model request, and its CPU time when GNU time can tell it. */
interface Sample {
  startMs: number;
  cpuMs?: number;
}

const gnuTime = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
let timed = 0;

/** Starts `command` under GNU time where there is one; `cpu()` then reads what it wrote. */
function start(command: string[], options: Parameters<typeof spawn>[2]) {
  const report = join(scratch, `time-${(timed += 1)}.txt`);
  const child = gnuTime ? spawn(gnuTime, ['-f', '%U %S', '-o', report, ...command], options) : spawn(command[0], command.slice(1), options);
  const cpu = () => {
    if (!gnuTime) return undefined;
    const [user, system] = readFileSync(report, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
    return (user + system) * 1000;
  };
  return { child, cpu };
}

const scratch = mkdtempSync(join(tmpdir(), 'manus-plugin-load-bench-'));

interface Build {
  cli: string;
  cacheFolder: string;
}
const build: Build = { cli: cliEntry, cacheFolder: join(scratch, 'cache') };
const baseline: Build | undefined = baselineCli ? { cli: baselineCli, cacheFolder: join(scratch, 'baseline-cache') } : undefined;

/** A new project folder with the plugin at `tools/noop.<extension>` and a recipe using it. */
function project(name: string, extension: 'mjs' | 'ts', source: string): string {
  const folder = join(scratch, name);
  mkdirSync(join(folder, 'tools'), { recursive: true });
  writeFileSync(join(folder, 'tools', `noop.${extension}`), source);
  writeFileSync(join(folder, 'bench.yaml'), ['version: 1', 'name: bench', 'prompt: Call noop once.', 'plugins: [./tools]', 'agent:', ...noopAgentLines(5), ''].join('\n'));
  return folder;
}

/** Process start to first model request, for a run of the recipe in `folder`. */
async function runOnce(folder: string, { cli, cacheFolder }: Build = build): Promise<Sample> {
  const server = await startScriptedModelServer({ turns: script });
  try {
    const started = performance.timeOrigin + performance.now();
    const { child, cpu } = start([process.execPath, cli, 'run', join(folder, 'bench.yaml'), '--quiet', '--json'], {
      cwd: folder,
      env: { ...process.env, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'bench', MANUS_MODEL: 'scripted-model', MANUS_CACHE_DIR: cacheFolder },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (exitCode !== 0) throw new Error(`benchmark run in ${folder} failed with exit ${exitCode}: ${output}`);
    const first = server.requests.find((request) => request.path.endsWith('/chat/completions'));
    return { startMs: first!.receivedAt - started, cpuMs: cpu() };
  } finally {
    await server.close();
  }
}

/** Process start to first request for a Node process that does nothing else. */
async function floorOnce(): Promise<Sample> {
  const server = await startScriptedModelServer({ turns: [{ content: 'done' }] });
  try {
    const started = performance.timeOrigin + performance.now();
    const request = `fetch(${JSON.stringify(`${server.baseUrl}/chat/completions`)}, { method: 'POST', body: '{}' }).then((response) => response.text())`;
    const { child, cpu } = start([process.execPath, '-e', request], { stdio: 'ignore' });
    await new Promise((resolve) => child.on('close', resolve));
    return { startMs: server.requests[0].receivedAt - started, cpuMs: cpu() };
  } finally {
    await server.close();
  }
}

type TypeScriptFigures = { newText: Sample[]; copy: Sample[]; secondRun: Sample[] };
const typeScriptFigures = (): TypeScriptFigures => ({ newText: [], copy: [], secondRun: [] });
const figures = { floor: [] as Sample[], javaScript: [] as Sample[], typeScript: typeScriptFigures(), baselineTypeScript: typeScriptFigures() };

async function typeScriptRuns(round: number, into: TypeScriptFigures, which: Build, prefix: string): Promise<void> {
  into.newText.push(await runOnce(project(`${prefix}new-${round}`, 'ts', typeScriptPlugin(`written for round ${round} at ${Date.now()}`)), which));
  const copy = project(`${prefix}copy-${round}`, 'ts', typeScriptPlugin('compiled before'));
  into.copy.push(await runOnce(copy, which));
  into.secondRun.push(await runOnce(copy, which));
}

try {
  // Warm-up: the runtime's code cache, and the compiled copy the copies below are made from.
  const javaScriptFolder = project('javascript', 'mjs', noopPluginSource);
  for (const which of [build, ...(baseline ? [baseline] : [])]) {
    await runOnce(javaScriptFolder, which);
    await runOnce(project(`compiled-before-${which === build ? 'build' : 'baseline'}`, 'ts', typeScriptPlugin('compiled before')), which);
  }
  for (let round = 0; round < rounds; round += 1) {
    figures.floor.push(await floorOnce());
    figures.javaScript.push(await runOnce(javaScriptFolder));
    await typeScriptRuns(round, figures.typeScript, build, '');
    if (baseline) await typeScriptRuns(round, figures.baselineTypeScript, baseline, 'baseline-');
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const startOf = (samples: Sample[]) => median(samples.map((sample) => sample.startMs));
const cpuOf = (samples: Sample[]) => {
  const values = samples.flatMap((sample) => (sample.cpuMs === undefined ? [] : [sample.cpuMs]));
  return values.length === 0 ? undefined : values.reduce((sum, value) => sum + value, 0) / values.length;
};
const floor = startOf(figures.floor);
const javaScript = startOf(figures.javaScript);
const line = (label: string, samples: Sample[]) => {
  const value = startOf(samples);
  const starts = samples.map((sample) => sample.startMs);
  const cpu = cpuOf(samples);
  const cpuText = cpu === undefined ? '' : `  CPU ${cpu.toFixed(0)} ms (${(cpu / cpuOf(figures.javaScript)!).toFixed(2)}x JavaScript)`;
  return `  ${label.padEnd(76)} ${value.toFixed(1).padStart(6)} ms  ${(value / floor).toFixed(2)}x floor  ${(value / javaScript).toFixed(2)}x JavaScript  (spread ${Math.min(...starts).toFixed(1)}-${Math.max(...starts).toFixed(1)})${cpuText}`;
};
const newTypeScript = startOf(figures.typeScript.newText);
const secondTypeScript = startOf(figures.typeScript.secondRun);
const firstRunLimit = 1.6 * floor;
const laterRunLimit = 1.1 * javaScript;
const passed = newTypeScript <= firstRunLimit && secondTypeScript <= laterRunLimit;
const typeScriptLines = (label: string, measured: TypeScriptFigures) => [
  line(`TypeScript plugin${label}, first run of a new text in a new folder`, measured.newText),
  line(`TypeScript plugin${label}, first run of a copy compiled before`, measured.copy),
  line(`TypeScript plugin${label}, second run in the same folder`, measured.secondRun),
];
process.stdout.write([
  `Process start to first model request, median of ${rounds} alternating rounds${gnuTime ? '; CPU time of the whole process, mean' : ''}:`,
  line('floor: Node sending one request and nothing else', figures.floor),
  line('JavaScript plugin', figures.javaScript),
  ...typeScriptLines('', figures.typeScript),
  ...(baseline ? typeScriptLines(' (baseline build)', figures.baselineTypeScript) : []),
  `${passed ? 'PASS' : 'FAIL'}: new TypeScript plugin's first run ${newTypeScript.toFixed(1)} ms (limit 1.6x floor = ${firstRunLimit.toFixed(1)} ms); ` +
    `second run ${secondTypeScript.toFixed(1)} ms (limit 1.1x JavaScript plugin = ${laterRunLimit.toFixed(1)} ms)`,
  '',
].join('\n'));
if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(figures)}\n`);
process.exitCode = passed ? 0 : 1;
