/**
 * Measures the shell command rules: how long loading the bash parser takes in a fresh process of
 * the built bundle (web-tree-sitter's runtime and the tree-sitter-bash grammar, both WASM), and,
 * once it is loaded, how long reading a 2 KB command takes and deciding it against 50 patterns.
 * It also times a whole permission check of a tool call against 50 rules of every kind (paths,
 * domains, URLs, text, tool names) in two blocks, as the tool runner makes it.
 * Targets: loading under 50 ms; a 2 KB command under 2 ms; a check with 50 rules under 0.2 ms. Prints absolute figures: wall time
 * (the minimum, the run least disturbed, and the median of many) and the CPU time the process
 * used (means), with the load average, since on a busy machine wall time also counts the time
 * spent waiting for a core.
 *
 *   npm run bench:permissions      BENCH_REPETITIONS=9 fresh processes, BENCH_ITERATIONS=500 parses
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzeShellCommand, loadShellParser } from '../runtime/services/permissions/shell-command-analysis.js';
import { decideShellCommand } from '../runtime/services/permissions/shell-command-rules.js';
import { decidePermission } from '../runtime/services/permissions/permission-decision.js';
import type { PermissionPolicy } from '../runtime/config/types.js';
import type { AnyToolDefinition } from '../runtime/contract/tool.js';

const repetitions = Number(process.env.BENCH_REPETITIONS ?? 9);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 500);
const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist', 'bundle', 'manus.cjs');

/** A build-and-test script of the kind a coding agent sends, about 2 KB. */
function twoKilobyteCommand(): string {
  const lines = [
    'set -euo pipefail',
    'cd "$(git rev-parse --show-toplevel)" && npm ci --no-audit --no-fund 2>&1 | tail -n 20',
    "for file in $(find src -name '*.ts' -newer package.json); do grep -n 'TODO' \"$file\" || true; done",
    'if [ -f .env.example ] && ! [ -f .env ]; then cp .env.example .env; fi',
    'timeout 120 npm run build -- --mode production > build.log 2>&1 || { tail -n 50 build.log; exit 1; }',
    "git diff --stat HEAD~1 | awk '{ print $1 }' | sort | uniq -c | sort -rn | head -n 10",
    'bash -c "npx vitest run test/unit --reporter=dot" && echo "unit tests passed"',
    'cat <<EOF > summary.txt\nbuilt at $(date -u +%FT%TZ)\ncommit $(git rev-parse --short HEAD)\nEOF',
    "find dist -type f -name '*.map' -exec rm -f {} +",
    'xargs -n 1 -P 4 gzip -k < <(find dist -name "*.js")',
  ];
  let command = '';
  for (let round = 0; command.length < 2048; round += 1) command += `${lines.map((line) => line.replaceAll('src', `src${round}`)).join('\n')}\n`;
  return command.slice(0, command.lastIndexOf('\n', 2048) + 1);
}

function median(values: number[]): number {
  const sorted = [...values].sort((first, second) => first - second);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((first, second) => first - second);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

/** Loading in a fresh process of the built bundle, as `manus` loads it: the first decision that needs the parser. */
function loadTimes(): Array<{ wall: number; cpu: number }> {
  if (!existsSync(bundle)) throw new Error('dist/bundle/manus.cjs is missing: run "npm run build" first');
  const script = [
    `const { decideShellCommand } = require(${JSON.stringify(bundle)});`,
    'const started = performance.now();',
    'const cpu = process.cpuUsage();',
    "decideShellCommand('true', { allow: ['true'], ask: [], deny: ['rm *'] }, { workspace: '/w', allow: [], ask: [], deny: [] })",
    '  .then(() => { const used = process.cpuUsage(cpu); console.log(JSON.stringify({ wall: performance.now() - started, cpu: (used.user + used.system) / 1000 })); });',
  ].join('\n');
  return Array.from({ length: repetitions }, () => JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as { wall: number; cpu: number });
}

interface Timings { wall: number[]; cpuMean: number }

async function timeEach(run: () => unknown): Promise<Timings> {
  const wall: number[] = [];
  const cpu = process.cpuUsage();
  for (let index = 0; index < iterations; index += 1) {
    const started = performance.now();
    await run();
    wall.push(performance.now() - started);
  }
  const used = process.cpuUsage(cpu);
  return { wall, cpuMean: (used.user + used.system) / 1000 / iterations };
}

const fiftyRules = {
  allow: ['git status', 'git diff *', 'git log *', 'git rev-parse *', 'npm ci *', 'npm run build:*', 'npm run test:*', 'npx vitest *', 'tail *', 'head *', 'grep *', 'find *', 'awk *', 'sort *', 'uniq *', 'cat *', 'echo *', 'cp *', 'date *', 'gzip *', 'xargs *', 'ls *', 'wc *', 'sed -n *', 'jq *', 'true', 'false', 'set *', 'cd *', 'pwd', 'mkdir -p *', 'touch *', 'diff *', 'node --version', 'python3 -m pytest *'],
  ask: ['git push *', 'git commit *', 'npm publish *', 'curl *', 'wget *', 'docker *', 'ssh *', 'scp *'],
  deny: ['rm -rf /*', 'sudo *', 'dd *', 'mkfs *', 'shutdown *', 'reboot', 'chmod 777 *'],
};
const noPaths = { workspace: '/srv/project', allow: [], ask: [], deny: [] };

const loads = loadTimes();
await loadShellParser();
const command = twoKilobyteCommand();
const analysis = await analyzeShellCommand(command);
const parser = await loadShellParser();
for (let index = 0; index < 50; index += 1) await analyzeShellCommand(command);
const parseOnly = await timeEach(() => parser.parse(command)?.delete());
const analyses = await timeEach(() => analyzeShellCommand(command));
const decisions = await timeEach(() => decideShellCommand(command, fiftyRules, noPaths));
const short = 'git status && git diff --stat | head -n 5';
const shortDecisions = await timeEach(() => decideShellCommand(short, fiftyRules, noPaths));
const decision = await decideShellCommand(command, fiftyRules, noPaths);

/** 50 rules in an agent's block and a recipe's, none for commands: the check every call pays. */
function fiftyRulePolicy(): PermissionPolicy {
  const paths = Array.from({ length: 16 }, (_, index) => `str_replace_editor(path=src/module${index}/**)`);
  const domains = Array.from({ length: 12 }, (_, index) => `web_fetch(domain=*.site${index}.example.org)`);
  const urls = Array.from({ length: 8 }, (_, index) => `browser_use(url=https://*.docs${index}.example.org/*)`);
  const names = Array.from({ length: 10 }, (_, index) => `mcp_server${index}_*`);
  const agent = { default: 'ask' as const, allow: [...paths, ...domains.slice(0, 6)], ask: [...urls], deny: [...names.slice(0, 5)], onAsk: 'ask' as const };
  const recipe = { default: 'allow' as const, allow: ['python_execute'], ask: [...domains.slice(6), 'web_search(query=*password*)'], deny: [...names.slice(5), 'str_replace_editor(path=**/.env)', 'str_replace_editor(path=/etc/**)'], onAsk: 'ask' as const };
  return { blocks: [{ source: "agent 'bench'", settings: agent }, { source: 'the recipe', settings: recipe }] };
}
const editor: AnyToolDefinition = {
  name: 'str_replace_editor',
  description: 'edit',
  parameters: { type: 'object', properties: { path: { type: 'string' }, command: { type: 'string' } } },
  permissionArguments: { path: 'path' },
  execute: () => 'ok',
};
const policy = fiftyRulePolicy();
const ruleCount = policy.blocks.reduce((total, block) => total + block.settings.allow.length + block.settings.ask.length + block.settings.deny.length, 0);
const checkCall = { tool: editor, input: { path: 'src/module15/deep/file.ts', command: 'view' }, workspace: '/srv/project' };
for (let index = 0; index < 200; index += 1) await decidePermission(policy, checkCall);
const checks = await timeEach(() => decidePermission(policy, checkCall));

const figure = (timings: Timings) => `wall min ${Math.min(...timings.wall).toFixed(3)} ms, median ${median(timings.wall).toFixed(3)} ms, p95 ${percentile(timings.wall, 0.95).toFixed(3)} ms; CPU mean ${timings.cpuMean.toFixed(3)} ms`;
const rows: Array<[string, string]> = [
  ['load average (1 min)', `${loadavg()[0]!.toFixed(2)}`],
  [`parser load, fresh bundle process (${repetitions} runs)`, `wall median ${median(loads.map((load) => load.wall)).toFixed(1)} ms, min ${Math.min(...loads.map((load) => load.wall)).toFixed(1)} ms; CPU median ${median(loads.map((load) => load.cpu)).toFixed(1)} ms   (target < 50 ms)`],
  [`tree-sitter parse of ${command.length} bytes (${iterations} runs)`, figure(parseOnly)],
  [`analysis of ${command.length} bytes: ${analysis.commands.length} simple commands`, `${figure(analyses)}   (target < 2 ms)`],
  [`decision of ${command.length} bytes against 50 patterns`, `${figure(decisions)}   (${decision.decision})`],
  [`decision of "${short}" against 50 patterns`, figure(shortDecisions)],
  [`permission check of a str_replace_editor call, ${ruleCount} rules in 2 blocks`, `${figure(checks)}   (target < 0.2 ms)`],
];
const width = Math.max(...rows.map(([name]) => name.length));
for (const [name, value] of rows) console.log(`${name.padEnd(width)}  ${value}`);
