/**
 * The loop benchmark (bench/loop-measurements.ts) of another commit against the working tree's
 * build, in alternating rounds with the floor, so that any change can show its cost in one command:
 *
 *   npm run bench:compare <git-ref> [-- --rounds N] [-- --json]
 *
 * The commit is checked out in a temporary worktree under the system's temporary folder, given the
 * working tree's node_modules when both lock files agree (else `npm ci` from npm's cache), and
 * built; the worktree is removed at the end, also after a failure or an interrupt. The working
 * tree is measured as it is built (`npm run build` first).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LoopBenchmark, floorRound, formatSummary, summarise, steps, type FloorFigures, type RoundFigures, type Summary } from './loop-measurements.js';
import { startUpModules } from './start-up-modules.js';

const { values: options, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: 'string' }, json: { type: 'boolean' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: npm run bench:compare <git-ref> [-- --rounds N] [-- --json]\n');
  process.exit(2);
}
const reference = positionals[0];
const rounds = Number(options.rounds ?? 7);
const repository = fileURLToPath(new URL('..', import.meta.url));
const workingEntry = join(repository, 'dist', 'bundle', 'main.js');
if (!existsSync(workingEntry)) throw new Error('the working tree is not built: run `npm run build` first');

const git = (...parameters: string[]) => execFileSync('git', parameters, { cwd: repository, encoding: 'utf8' }).trim();
const commit = git('rev-parse', '--verify', `${reference}^{commit}`);
const scratch = mkdtempSync(join(tmpdir(), 'manus-bench-compare-'));
const worktree = join(scratch, 'tree');
const removeWorktree = () => {
  try {
    git('worktree', 'remove', '--force', worktree);
  } catch {
    // Never added, or already gone: pruning below forgets it either way.
  }
  rmSync(scratch, { recursive: true, force: true });
  git('worktree', 'prune');
};
process.once('SIGINT', () => {
  removeWorktree();
  process.exit(130);
});

try {
  process.stderr.write(`building ${reference} (${commit.slice(0, 12)}) in ${worktree}\n`);
  git('worktree', 'add', '--detach', worktree, commit);
  installDependencies(worktree);
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: worktree, stdio: ['ignore', 'ignore', 'inherit'] });
  const builds = [
    { label: reference, entry: join(worktree, 'dist', 'bundle', 'main.js') },
    { label: 'working tree', entry: workingEntry },
  ].map((build) => ({ ...build, benchmark: new LoopBenchmark(build.entry), rounds: [] as RoundFigures[] }));
  const floors: FloorFigures[] = [];
  try {
    for (const build of builds) await build.benchmark.warmUp();
    for (let round = 0; round < rounds; round += 1) {
      process.stderr.write(`round ${round + 1} of ${rounds}\n`);
      // The order turns each round: floor, then each build, each first as often as the other.
      floors.push(await floorRound(builds[1].benchmark.lastBodies));
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) build.rounds.push(await build.benchmark.round());
    }
  } finally {
    for (const build of builds) build.benchmark.close();
  }
  printComparison(builds, floors);
  if (options.json) process.stdout.write(`${JSON.stringify({ floors, builds: builds.map(({ label, rounds: figures }) => ({ label, rounds: figures })) })}\n`);
} finally {
  removeWorktree();
}

/** The working tree's node_modules when the lock files agree; otherwise an install from npm's cache. */
function installDependencies(folder: string): void {
  const lock = (root: string) => readFileSync(join(root, 'package-lock.json'), 'utf8');
  if (lock(folder) === lock(repository)) {
    symlinkSync(join(repository, 'node_modules'), join(folder, 'node_modules'), 'dir');
    return;
  }
  process.stderr.write('its package-lock.json differs: installing its dependencies from the npm cache\n');
  execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: folder, stdio: ['ignore', 'ignore', 'inherit'] });
}

function printComparison(builds: Array<{ label: string; entry: string; rounds: RoundFigures[] }>, floors: FloorFigures[]): void {
  const [base, working] = builds;
  const ratio = (figure: (build: RoundFigures) => number, floorFigure: (floor: FloorFigures) => number) => (build: RoundFigures, index: number) => figure(build) / floorFigure(floors[index]);
  const figures: Array<{ name: string; unit: string; value: (build: RoundFigures, index: number) => number | undefined; floor?: (floor: FloorFigures) => number | undefined }> = [
    { name: 'cold start', unit: 'ms', value: (build) => build.coldStart, floor: (floor) => floor.coldStart },
    { name: '  ratio to the floor (target 1.25)', unit: 'x', value: ratio((build) => build.coldStart, (floor) => floor.coldStart) },
    { name: `step, median of steps 20-${steps}`, unit: 'ms', value: (build) => build.lateStep, floor: (floor) => floor.lateStep },
    { name: '  ratio to the floor (target 1.2)', unit: 'x', value: ratio((build) => build.lateStep, (floor) => floor.lateStep) },
    { name: 'step, median of all steps', unit: 'ms', value: (build) => build.allSteps, floor: (floor) => floor.allSteps },
    { name: '  ratio to the floor (target 1.3)', unit: 'x', value: ratio((build) => build.allSteps, (floor) => floor.allSteps) },
    { name: 'peak resident memory (target 70)', unit: 'MiB', value: (build) => build.peakMemory, floor: (floor) => floor.peakMemory },
    { name: 'CPU time, user and system', unit: 'ms', value: (build) => build.cpuTime, floor: (floor) => floor.cpuTime },
    { name: 'first start, empty code cache', unit: 'ms', value: (build) => build.firstStart },
    { name: '  ratio to the floor (target 1.6)', unit: 'x', value: ratio((build) => build.firstStart, (floor) => floor.coldStart) },
    { name: 'TypeScript plugin, a new file', unit: 'ms', value: (build) => build.typeScriptFirstRun },
    { name: '  ratio to the floor (target 1.6)', unit: 'x', value: ratio((build) => build.typeScriptFirstRun, (floor) => floor.coldStart) },
    { name: 'TypeScript plugin, compiled before', unit: 'ms', value: (build) => build.typeScriptColdStart },
  ];
  const width = 30;
  const cell = (summary: Summary | undefined, unit: string) => formatSummary(summary, unit, unit === 'MiB' || unit === 'ms' && (summary?.median ?? 0) >= 100 ? 1 : 2).padEnd(width);
  const lines = [
    `${rounds} rounds, each: the floor and both builds in turns; median (25th-75th percentile)`,
    `${''.padEnd(36)}${base.label.padEnd(width)}${working.label.padEnd(width)}change   floor`,
  ];
  for (const figure of figures) {
    const before = summarise(base.rounds.map(figure.value));
    const after = summarise(working.rounds.map(figure.value));
    const change = before && after ? `${after.median >= before.median ? '+' : ''}${(((after.median - before.median) / before.median) * 100).toFixed(0)}%` : '';
    const floor = figure.floor ? formatSummary(summarise(floors.map(figure.floor)), figure.unit, 1) : '';
    lines.push(`${figure.name.padEnd(36)}${cell(before, figure.unit)}${cell(after, figure.unit)}${change.padEnd(9)}${floor}`);
  }
  for (const build of builds) {
    const modules = startUpModules(build.entry.replace(/[\\/]main\.js$/, '-metafile.json'));
    lines.push(`start-up modules, ${build.label}: ${modules ? `${modules.count} modules, ${(modules.bytes / 1024).toFixed(1)} KB of a ${(modules.bundleBytes / 1024).toFixed(1)} KB bundle` : 'no metafile (built by an older scripts/bundle.mjs)'}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
