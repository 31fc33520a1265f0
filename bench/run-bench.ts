/**
 * The loop benchmark (bench/loop-measurements.ts) of the built command against its floor, in
 * alternating rounds: cold start, first start with an empty code cache, the step, peak memory, CPU
 * time and the first run of a new TypeScript plugin; the prompt sent per step; and what the bundle
 * evaluates at start-up. Ends with a line saying whether every target is met, and exits with 1
 * when one is missed.
 *
 *   npm run bench [-- --rounds N] [-- --json]
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LoopBenchmark, floorRound, formatSummary, steps, summarise, type FloorFigures, type RoundFigures, type Summary } from './loop-measurements.js';
import { formatStartUpModules, startUpModules } from './start-up-modules.js';
import { TokenCounter } from '../runtime/services/model/token-counter.js';
import type { RecordedChatRequest } from '../test/support/scripted-model-server.js';
import type { ChatMessage } from '../runtime/contract/tool.js';

const { values: options } = parseArgs({ options: { rounds: { type: 'string' }, json: { type: 'boolean' } } });
const rounds = Number(options.rounds ?? process.env.BENCH_REPETITIONS ?? 7);
const cliEntry = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/bundle/main.js', import.meta.url));
const metafile = cliEntry.replace(/[\\/]main\.js$/, '-metafile.json');

interface Target {
  figure: string;
  /** Per round: the build's figure, or its ratio to the floor's. */
  values: Array<number | undefined>;
  limit: number;
  unit: string;
}

const benchmark = new LoopBenchmark(cliEntry);
const builds: RoundFigures[] = [];
const floors: FloorFigures[] = [];
let requests: RecordedChatRequest[];
try {
  await benchmark.warmUp();
  requests = await benchmark.requestsOfOneRun();
  for (let round = 0; round < rounds; round += 1) {
    // In turns, so that neither always runs on a machine the other has just warmed or loaded.
    if (round % 2 === 0) {
      floors.push(await floorRound(benchmark.lastBodies));
      builds.push(await benchmark.round());
    } else {
      builds.push(await benchmark.round());
      floors.push(await floorRound(benchmark.lastBodies));
    }
  }
} finally {
  benchmark.close();
}

const perRound = (figure: (build: RoundFigures, floor: FloorFigures) => number | undefined) => builds.map((build, index) => figure(build, floors[index]));
const targets: Target[] = [
  { figure: 'cold start', values: perRound((build, floor) => build.coldStart / floor.coldStart), limit: 1.25, unit: 'times the floor' },
  { figure: `step, median of steps 20-${steps}`, values: perRound((build, floor) => build.lateStep / floor.lateStep), limit: 1.2, unit: 'times the floor' },
  { figure: 'step, median of all steps', values: perRound((build, floor) => build.allSteps / floor.allSteps), limit: 1.3, unit: 'times the floor' },
  { figure: 'peak resident memory', values: perRound((build) => build.peakMemory), limit: 70, unit: 'MiB' },
  { figure: 'first start, empty code cache', values: perRound((build, floor) => build.firstStart / floor.coldStart), limit: 1.6, unit: 'times the floor' },
  { figure: 'first run of a new TypeScript plugin', values: perRound((build, floor) => build.typeScriptFirstRun / floor.coldStart), limit: 1.6, unit: 'times the floor' },
];

const row = (figure: string, build: Summary | undefined, floor: Summary | undefined, unit: string) =>
  `  ${figure.padEnd(46)} ${formatSummary(build, unit, unit === 'ms' ? 2 : 1).padEnd(28)} ${floor ? `floor ${formatSummary(floor, unit, unit === 'ms' ? 2 : 1)}` : ''}`;
const column = <T>(rows: T[], figure: (row: T) => number | undefined) => summarise(rows.map(figure));
const { tokens, characters, appendOnly } = promptFigures(requests!);
const growth = tokens.slice(1).map((count, index) => count - tokens[index]);
process.stdout.write([
  `${cliEntry}: ${rounds} rounds in turns with the floor, ${steps} no-op steps each; median (25th-75th percentile)`,
  row('cold start, process start to first request', column(builds, (build) => build.coldStart), column(floors, (floor) => floor.coldStart), 'ms'),
  row('first start, empty code cache', column(builds, (build) => build.firstStart), undefined, 'ms'),
  row(`step, request to request, steps 20-${steps}`, column(builds, (build) => build.lateStep), column(floors, (floor) => floor.lateStep), 'ms'),
  row('step, request to request, all steps', column(builds, (build) => build.allSteps), column(floors, (floor) => floor.allSteps), 'ms'),
  row('kernel time per step, reply to next request', column(builds, (build) => build.kernelStep), undefined, 'ms'),
  row('kernel time at step 1 (loads ajv)', column(builds, (build) => build.stepOne), undefined, 'ms'),
  row('peak resident memory', column(builds, (build) => build.peakMemory), column(floors, (floor) => floor.peakMemory), 'MiB'),
  row('CPU time, user and system', column(builds, (build) => build.cpuTime), column(floors, (floor) => floor.cpuTime), 'ms'),
  row('TypeScript plugin, compiled by an earlier run', column(builds, (build) => build.typeScriptColdStart), undefined, 'ms'),
  row('TypeScript plugin, a new file in a new folder', column(builds, (build) => build.typeScriptFirstRun), undefined, 'ms'),
  `  prompt tokens sent: step 1 ${tokens[0]}, step ${steps} ${tokens[steps - 1]}; growth per step ${Math.min(...growth)}-${Math.max(...growth)} tokens; characters: step 1 ${characters[0]}, step ${steps} ${characters[steps - 1]}; history append-only: ${appendOnly ? 'yes' : 'NO'}`,
  ...formatStartUpModules(startUpModules(metafile)),
  '',
  'targets (median of the rounds\' figures; a ratio is taken within each round):',
  ...targets.map((target) => {
    const summary = summarise(target.values);
    return `  ${met(target) ? 'met   ' : 'MISSED'} ${target.figure.padEnd(40)} ${formatSummary(summary, target.unit, 2)}, at most ${target.limit}`;
  }),
  '',
].join('\n'));
if (options.json) process.stdout.write(`${JSON.stringify({ builds, floors, promptTokens: tokens })}\n`);
const missed = targets.filter((target) => !met(target));
process.stdout.write(missed.length === 0
  ? `PASS: all ${targets.length} targets met\n`
  : `FAIL: ${missed.length} of ${targets.length} targets missed: ${missed.map((target) => `${target.figure} ${summarise(target.values)?.median.toFixed(2) ?? 'n/a'} ${target.unit} (at most ${target.limit})`).join('; ')}\n`);
process.exitCode = missed.length === 0 ? 0 : 1;

/** A figure that cannot be measured here (memory without /proc) is not held against the build. */
function met(target: Target): boolean {
  const summary = summarise(target.values);
  return summary === undefined || summary.median <= target.limit;
}

function promptFigures(sent: RecordedChatRequest[]) {
  const counter = new TokenCounter('gpt-4o');
  const tokenCounts = sent.map((request) => counter.countMessages(request.body.messages as ChatMessage[]));
  const characterCounts = sent.map((request) => JSON.stringify(request.body.messages).length);
  // History must be a prefix of the next request's history: nothing re-sent, nothing rewritten.
  let prefix = true;
  for (let index = 1; index < sent.length; index += 1) {
    const previous = sent[index - 1].body.messages as ChatMessage[];
    const current = sent[index].body.messages as ChatMessage[];
    const kept = previous.slice(0, -1);
    if (JSON.stringify(current.slice(0, kept.length)) !== JSON.stringify(kept)) prefix = false;
  }
  return { tokens: tokenCounts, characters: characterCounts, appendOnly: prefix };
}
