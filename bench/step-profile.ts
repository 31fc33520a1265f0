/**
 * The kernel's time per step, side by side: one or more builds of the CLI and a bare request loop
 * (the floor), in alternating rounds so that a change in the machine's speed touches them alike.
 * With --profile it instead runs one build once under V8's CPU profiler and lists where the time
 * went, by function (self time) and by the runtime's own functions (total time).
 *
 *   npm run bench:step                                  this build against the floor
 *   npm run bench:step -- OTHER/dist/bundle/main.js     another build too, alternating with this one
 *   npm run bench:step -- --profile --steps 300 [BUILD] the ten biggest costs of a 300-step run
 *
 * Options: --steps N (30), --rounds N (7), --top N (10). A step is the time from one request
 * reaching the server to the next, as in `npm run bench`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { noopPluginSource, noopRecipe, noopScript } from './no-op-agent.js';
import { chatRequests, median, requestIntervals } from './loop-measurements.js';
import { startScriptedModelServer, type RecordedChatRequest } from '../test/support/scripted-model-server.js';
import { bareRequestLoop } from './bare-request-loop.js';

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    steps: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '7' },
    top: { type: 'string', default: '10' },
    profile: { type: 'boolean', default: false },
  },
});
const steps = Number(options.steps);
const rounds = Number(options.rounds);
const top = Number(options.top);
const ownBuild = fileURLToPath(new URL('../dist/bundle/main.js', import.meta.url));
const others = positionals.map((path) => resolve(path));
// Compared: this build and the others given; profiled: the first given, else this build.
const builds = options.profile ? [others[0] ?? ownBuild] : [ownBuild, ...others];

function projectFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'manus-step-'));
  mkdirSync(join(folder, 'tools'));
  writeFileSync(join(folder, 'tools', 'noop.mjs'), noopPluginSource);
  writeFileSync(join(folder, 'bench.yaml'), noopRecipe(steps));
  return folder;
}

interface Run { requests: RecordedChatRequest[]; cpuMs: number }

/**
 * A file each measured process requires first: it writes the CPU time (user and system) the
 * process used to the file named in the environment, as the process exits.
 */
function cpuReporter(folder: string): string {
  const file = join(folder, 'report-cpu.cjs');
  writeFileSync(file, [
    "process.once('exit', () => {",
    '  const used = process.cpuUsage();',
    "  require('node:fs').writeFileSync(process.env.STEP_PROFILE_CPU_FILE, String((used.user + used.system) / 1000));",
    '});',
    '',
  ].join('\n'));
  return file;
}

async function measured(folder: string, spawnProcess: (env: NodeJS.ProcessEnv, nodeOptions: string[]) => ReturnType<typeof spawn>): Promise<number> {
  const cpuFile = join(folder, 'cpu.txt');
  rmSync(cpuFile, { force: true });
  const child = spawnProcess({ ...process.env, STEP_PROFILE_CPU_FILE: cpuFile }, ['--require', cpuReporter(folder)]);
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  const exitCode = await new Promise<number | null>((resolvePromise) => child.on('close', resolvePromise));
  if (exitCode !== 0) throw new Error(`the measured process exited with ${exitCode}: ${output}`);
  return Number(readFileSync(cpuFile, 'utf8'));
}

async function runBuild(cli: string, folder: string, cacheFolder: string, nodeOptions: string[] = []): Promise<Run> {
  const server = await startScriptedModelServer({ turns: noopScript(steps) });
  try {
    const cpuMs = await measured(folder, (env, reporter) => spawn(process.execPath, [...reporter, ...nodeOptions, cli, 'run', join(folder, 'bench.yaml'), '--quiet', '--json'], {
      cwd: folder,
      env: { ...env, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'bench-key-not-secret', MANUS_MODEL: 'scripted-model', MANUS_CACHE_DIR: cacheFolder },
      stdio: ['ignore', 'pipe', 'inherit'],
    }));
    return { requests: chatRequests(server.requests), cpuMs };
  } finally {
    await server.close();
  }
}

/** A Node process sending the same request bodies in a plain loop, each once the last reply has been read. */
async function runFloor(bodies: unknown[]): Promise<Run> {
  const server = await startScriptedModelServer({ turns: noopScript(steps) });
  const folder = mkdtempSync(join(tmpdir(), 'manus-step-floor-'));
  try {
    const loop = bareRequestLoop(folder, server.baseUrl, bodies);
    const cpuMs = await measured(folder, (env, reporter) => spawn(process.execPath, [...reporter, '-e', loop], { env, stdio: ['ignore', 'ignore', 'inherit'] }));
    return { requests: chatRequests(server.requests), cpuMs };
  } finally {
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

interface Figures { late: number[]; all: number[]; lateMedians: number[]; cpu: number[] }

function emptyFigures(): Figures {
  return { late: [], all: [], lateMedians: [], cpu: [] };
}

function addRun(figures: Figures, { requests, cpuMs }: Run): void {
  figures.cpu.push(cpuMs);
  const gaps = requestIntervals(requests);
  const late = gaps.slice(19, 30);
  figures.late.push(...late);
  figures.all.push(...gaps);
  figures.lateMedians.push(median(late));
}

async function compare(): Promise<void> {
  const folder = projectFolder();
  const cacheFolders = builds.map(() => mkdtempSync(join(tmpdir(), 'manus-step-cache-')));
  try {
    // One run each first, so that every build starts the rounds with its code cache written.
    let bodies: unknown[] = [];
    for (const [index, cli] of builds.entries()) bodies = (await runBuild(cli, folder, cacheFolders[index]!)).requests.map((request) => request.body);
    const figures = builds.map(emptyFigures);
    const floor = emptyFigures();
    for (let round = 0; round < rounds; round += 1) {
      // The order turns each round, so that no build always follows the same one.
      const order = builds.map((_, index) => (index + round) % builds.length);
      for (const index of order) addRun(figures[index]!, await runBuild(builds[index]!, folder, cacheFolders[index]!));
      addRun(floor, await runFloor(bodies));
    }
    const floorLate = median(floor.late);
    const floorAll = median(floor.all);
    const format = (value: number) => `${value.toFixed(3)} ms`;
    const spread = (values: number[]) => `${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}`;
    process.stdout.write(`${rounds} alternating rounds of ${steps} no-op steps; step = request to request\n`);
    // The least CPU time a process took: on a busy machine the median also counts cache and core contention.
    const cpu = (values: number[]) => `CPU per process median ${median(values).toFixed(0)} ms, least ${Math.min(...values).toFixed(0)} ms`;
    process.stdout.write(`  floor (bare request loop): steps 20-30 ${format(floorLate)} (per-run medians ${spread(floor.lateMedians)}), all steps ${format(floorAll)}; ${cpu(floor.cpu)}\n`);
    for (const [index, cli] of builds.entries()) {
      const { late, all, lateMedians, cpu: cpuTimes } = figures[index]!;
      process.stdout.write(
        `  ${cli}\n    steps 20-30 ${format(median(late))} = ${(median(late) / floorLate).toFixed(2)}x floor (per-run medians ${spread(lateMedians)}); ` +
        `all steps ${format(median(all))} = ${(median(all) / floorAll).toFixed(2)}x floor; ${cpu(cpuTimes)}\n`,
      );
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
    for (const cacheFolder of cacheFolders) rmSync(cacheFolder, { recursive: true, force: true });
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/** Time by function: self time, and total time (self plus callees, each function counted once per stack). */
function summarize(profile: CpuProfile): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const name = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.split('/').slice(-2).join('/');
    return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const stackNames = (sample: number) => {
    const names: string[] = [];
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) names.push(byId.get(id)!.callFrame.functionName);
    return names;
  };
  // Start-up is not a step: counting begins with the first sample inside the loop's step.
  const first = profile.samples.findIndex((sample) => stackNames(sample).includes('runStep'));
  let measured = 0;
  for (const [index, sample] of profile.samples.entries()) {
    if (index < first) continue;
    const delta = profile.timeDeltas[index]! / 1000;
    const leaf = byId.get(sample)!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    measured += delta;
    self.set(name(leaf), (self.get(name(leaf)) ?? 0) + delta);
    const seen = new Set<string>();
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const key = name(byId.get(id)!);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + delta);
    }
  }
  const perStep = (milliseconds: number) => `${(milliseconds / steps).toFixed(3)} ms/step`;
  const list = (title: string, entries: Map<string, number>, keep: (key: string) => boolean) => {
    process.stdout.write(`${title}\n`);
    const sorted = [...entries].filter(([key]) => keep(key)).sort((left, right) => right[1] - left[1]).slice(0, top);
    for (const [key, milliseconds] of sorted) process.stdout.write(`  ${perStep(milliseconds).padStart(16)}  ${key}\n`);
  };
  process.stdout.write(`busy time from the first step on: ${measured.toFixed(1)} ms, ${perStep(measured)}\n`);
  list('self time by function:', self, () => true);
  list('total time of the runtime\'s own functions (bundle):', total, (key) => key.includes('bundle/manus.cjs') && !/^\(anonymous\)|^(run|main|runAgentLoop|runStep|runRecipe)\b/.test(key));
}

async function profile(): Promise<void> {
  const folder = projectFolder();
  const cacheFolder = mkdtempSync(join(tmpdir(), 'manus-step-cache-'));
  const profileFolder = mkdtempSync(join(tmpdir(), 'manus-step-profile-'));
  try {
    await runBuild(builds[0]!, folder, cacheFolder);
    const { requests } = await runBuild(builds[0]!, folder, cacheFolder, ['--cpu-prof', '--cpu-prof-dir', profileFolder, '--cpu-prof-interval', '100']);
    const file = readdirSync(profileFolder).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('the CLI wrote no CPU profile');
    const cpuProfile = JSON.parse(readFileSync(join(profileFolder, file), 'utf8')) as CpuProfile;
    process.stdout.write(`${builds[0]}: ${steps} steps, median step ${median(requestIntervals(requests)).toFixed(3)} ms (profiling slows it)\n`);
    summarize(cpuProfile);
  } finally {
    rmSync(folder, { recursive: true, force: true });
    rmSync(cacheFolder, { recursive: true, force: true });
    rmSync(profileFolder, { recursive: true, force: true });
  }
}

if (options.profile) await profile();
else await compare();
