/**
 * The `manus` command's program. The only place that exits the process: everything below returns
 * results or throws typed errors, and this file turns them into output and an exit code.
 */
import { Command, Help, InvalidArgumentError, type Option } from 'commander';
import { dropWritesAfterClose } from './closed-output.js';
import { helpAfter } from './help-text.js';
import { ConfigError, formatDiagnostic, ManusError, UsageError, type Diagnostic } from '../runtime/contract/errors.js';
import { ExitCode, exitCodeForError } from './exit-codes.js';
import { mcpServeCommand } from './mcp-serve-command.js';
import { a2aServeCommand } from './a2a-serve-command.js';
import { sandboxKind } from './sandbox-option.js';
import type { BatchCommandOptions } from './batch-command.js';
import type { ImportCommandOptions } from './import-command.js';
import type { EvalCommandOptions } from './eval-command.js';
import type { ReplayCommandOptions } from './replay-command.js';
import type { ResumeCommandOptions } from './resume-command.js';
import type { RunCommandOptions } from './run-command.js';
import type { ViewCommandOptions } from './view-command.js';
import type { WorkerCommandOptions } from './worker-command.js';
import { terminalText } from '../runtime/services/terminal-text.js';

/** The package's version, filled in by the build. */
declare const MANUS_VERSION: string;

const answerHelp = 'an answer for the agent\'s questions, used in order (repeatable); also answers permission prompts, where "yes" approves the call (a recipe\'s answers: never do)';

const trustHelp = 'allow what the recipe asks for beyond its agent, comma-separated: host, network, hosts, env, image, resources, workspace, browser, mcp, sampling, user, or all (repeatable; also trust: in ~/.config/manus/config.yaml)';

function createProgram(): Command {
  const program = new Command();
  program
    .name('manus')
    .description('Run AI agents declared in YAML, with tools loaded from plugins.')
    .version(MANUS_VERSION)
    .showHelpAfterError('see `manus --help`')
    .configureHelp({ optionDescription })
    .exitOverride((error) => {
      // commander's own help and version output are successes; its parse errors are usage errors.
      process.exit(error.exitCode === 0 ? ExitCode.success : ExitCode.usage);
    });

  program
    .command('run')
    .description('run a recipe to completion and print the final answer')
    .argument('<recipe>', 'the recipe YAML file, or <package>/<recipe> for a recipe of an installed pack')
    .option('--prompt <text>', 'the task, replacing the recipe prompt')
    .option('--param <key=value>', 'a recipe parameter (repeatable)', collect, [])
    .option('--model <name>', 'a profile name from agents.yaml, or a model id')
    .option('--max-steps <n>', 'the step budget', positiveInteger)
    .option('--max-tokens <n>', 'the token budget (prompt and completion tokens together)', positiveInteger)
    .option('--max-cost <dollars>', 'the cost budget in US dollars (needs prices in the model profile)', positiveNumber)
    .option('--max-time <seconds>', 'the wall-time budget', positiveNumber)
    .option('--record <file>', 'also write the run\'s events to this file: a self-contained recording')
    .option('--answer <text>', answerHelp, collect, [])
    .option('--trust <grants>', trustHelp, collect, [])
    .option('--workspace <folder>', 'the folder the agent works in (default workspace/<run id>)')
    .option('--workspace-from <folder>', 'start the workspace as a copy of this folder (it must be new or empty)')
    .option('--sandbox <kind>', 'where code runs: auto (bubblewrap, else Docker, else the host if you agree), bwrap, docker, or host (no isolation)', sandboxKind)
    .option('--runs-dir <folder>', 'where run folders go (default .manus/runs)')
    .option('--json', 'print one JSON object with the outcome instead of the answer')
    .option('--quiet', 'no progress on stderr')
    .option('--ci', 'no questions, no colours, plain progress (also when CI=true)')
    .option('--report <folder>', 'write manus-report.json, manus-junit.xml and manus-report.html there')
    .option('--mcp <server>', 'add an MCP server for this run, name=command args... (repeatable); all its tools are offered, as mcp_<name>_<tool>', collect, [])
    .action(async (recipe: string, options: RunCommandOptions) => {
      const { runCommand } = await import('./run-command.js');
      return finish(await runCommand(recipe, options));
    });

  program
    .command('resume')
    .description('continue a run that was interrupted, killed or ran out of budget')
    .argument('<run>', 'the run id (or a unique prefix of it)')
    .option('--max-steps <n>', 'the step budget for the whole run, to extend it', positiveInteger)
    .option('--max-tokens <n>', 'the token budget for the whole run', positiveInteger)
    .option('--answer <text>', answerHelp, collect, [])
    .option('--approve <call>', 'run a call the run stopped on for approval (repeatable; the call id is in the run\'s output)', collect, [])
    .option('--deny <call>', 'refuse a call the run stopped on for approval; the agent is told (repeatable)', collect, [])
    .option('--reason <text>', 'why the calls given with --deny are refused, for the agent to read')
    .option('--trust <grants>', trustHelp, collect, [])
    .option('--runs-dir <folder>', 'where run folders are (default .manus/runs)')
    .option('--json', 'print one JSON object with the outcome instead of the answer')
    .option('--quiet', 'no progress on stderr')
    .option('--ci', 'no questions, no colours, plain progress (also when CI=true)')
    .option('--report <folder>', 'write manus-report.json, manus-junit.xml and manus-report.html there')
    .action(async (run: string, options: ResumeCommandOptions) => {
      const { resumeCommand } = await import('./resume-command.js');
      return finish(await resumeCommand(run, options));
    });

  program
    .command('replay')
    .description('re-run a recorded run with the model\'s recorded replies (no model needed)')
    .argument('<run>', 'a run id, or a recording (events.jsonl) file')
    .option('--tools <mode>', 'recorded: use the recorded tool results; real: run the tools and compare', 'recorded')
    .option('--trust <grants>', trustHelp, collect, [])
    .option('--workspace <folder>', 'the folder the replay works in (default workspace/<run id>, prepared as the recording was)')
    .option('--runs-dir <folder>', 'where run folders are (default .manus/runs)')
    .option('--json', 'print one JSON object with the outcome instead of the answer')
    .option('--quiet', 'no progress on stderr')
    .option('--ci', 'no questions, no colours, plain progress (also when CI=true)')
    .option('--report <folder>', 'write manus-report.json, manus-junit.xml and manus-report.html there')
    .action(async (run: string, options: ReplayCommandOptions) => {
      const { replayCommand } = await import('./replay-command.js');
      return finish(await replayCommand(run, options));
    });

  program
    .command('batch')
    .description('run a recipe once per input, in this process or on workers through a queue; `batch show <id>` prints a batch, `batch resume <id>` runs the items that did not succeed')
    .argument('<words...>', '<recipe> --inputs FILE, or show <id>, or resume <id>')
    .option('--inputs <file>', 'the items: a .jsonl file of objects or a .csv file with a header, a key or column per recipe parameter')
    .option('--param <key=value>', 'a recipe parameter fixed for every item (repeatable)', collect, [])
    .option('--concurrency <n>', 'items run at once in this process (default: four per core, from 4 to 16)', positiveInteger)
    .option('--model <name>', 'a profile name from agents.yaml, or a model id (on a queue, workers run it when their --models offers it)')
    .option('--item-max-steps <n>', 'each item\'s step budget', positiveInteger)
    .option('--item-max-tokens <n>', 'each item\'s token budget', positiveInteger)
    .option('--item-max-cost <dollars>', 'each item\'s cost budget in US dollars', positiveNumber)
    .option('--item-max-time <seconds>', 'each item\'s wall-time budget', positiveNumber)
    .option('--max-tokens <n>', 'the token budget of the whole batch: when it is spent, running items stop and no more start', positiveInteger)
    .option('--max-cost <dollars>', 'the cost budget of the whole batch in US dollars (needs prices in the model profile)', positiveNumber)
    .option('--max-time <seconds>', 'the wall-time budget of the whole batch', positiveNumber)
    .option('--retries <n>', 'tries again an item that failed (a failed check or task) up to n times; provider failures are retried anyway', nonNegativeInteger, 0)
    .option('--queue <url>', 'run the items on workers through BullMQ on this Redis, redis://HOST:PORT/DB or rediss:// (start workers with manus worker)')
    .option('--trust <grants>', trustHelp, collect, [])
    .option('--sandbox <kind>', 'where code runs: auto, bwrap, docker, or host', sandboxKind)
    .option('--batches-dir <folder>', 'where batch folders go (default .manus/batches)')
    .option('--json', 'print one JSON object with the batch and its items instead of the table')
    .option('--quiet', 'no progress on stderr')
    .option('--ci', 'no questions, no colours, a plain line per item (also when CI=true)')
    .option('--report <folder>', 'write manus-batch-report.json, manus-junit.xml (one test case per item) and manus-report.html (with a page per item) there')
    .action(async (words: string[], options: BatchCommandOptions) => {
      const [first, id, ...rest] = words;
      if ((first === 'show' || first === 'resume') && words.length === 2) {
        if (first === 'show') {
          const { batchShowCommand } = await import('./batch-show-command.js');
          return finish(await batchShowCommand(id, options));
        }
        const { batchResumeCommand } = await import('./batch-command.js');
        return finish(await batchResumeCommand(id, options));
      }
      if (words.length > 1 || (first === 'show' || first === 'resume') && id === undefined) {
        throw new UsageError(first === 'show' || first === 'resume' ? `batch ${first} needs one batch id` : `batch takes one recipe, got: ${[first, id, ...rest].join(' ')}`);
      }
      if (!options.inputs) throw new UsageError('batch needs --inputs FILE (.jsonl or .csv) with the items to run the recipe on');
      const { batchCommand } = await import('./batch-command.js');
      return finish(await batchCommand(first, options));
    });

  program
    .command('eval')
    .description('score a recipe over an eval file\'s rows, on one model or several, k times each, with intervals, a baseline and gates; `eval resume <id>` runs what did not end')
    .argument('<words...>', '<file.eval.yaml>, or resume <id>')
    .option('--models <list>', 'comma-separated profiles from agents.yaml or model ids, each run on every row (default: the recipe\'s own)')
    .option('--repeat <k>', 'run each row k times: pass@k (any of k passed), pass^k (all of k passed) and the mean with its interval', positiveInteger)
    .option('--concurrency <n>', 'runs at once in this process (default: four per core, from 4 to 16)', positiveInteger)
    .option('--queue <url>', 'run the runs on workers through BullMQ on this Redis, as manus batch does (a worker runs only the models its --models offers)')
    .option('--cache', 'keep model replies in .manus/eval-cache (on a queue, each worker\'s), keyed by the request and the repeat, so a rerun with unchanged prompts asks no model')
    .option('--replay <eval>', 'score a recorded eval (an id in .manus/evals, or a folder with eval.json) again with this file\'s scorers, without a model')
    .option('--min-score <scores>', 'fail (exit 1) when a model\'s mean score is below this: 0.8 for every model, or model=0.8,other=0.7')
    .option('--baseline <eval.json>', 'fail (exit 1) when a model\'s score fell below this earlier eval\'s by more than the paired 95% interval allows, naming the rows that got worse')
    .option('--item-max-steps <n>', 'each run\'s step budget', positiveInteger)
    .option('--item-max-time <seconds>', 'each run\'s wall-time budget', positiveNumber)
    .option('--max-tokens <n>', 'the token budget of the whole eval (exit 3 when spent)', positiveInteger)
    .option('--max-cost <dollars>', 'the cost budget of the whole eval in US dollars (exit 3 when spent; needs prices)', positiveNumber)
    .option('--max-time <seconds>', 'the wall-time budget of the whole eval', positiveNumber)
    .option('--trust <grants>', trustHelp, collect, [])
    .option('--evals-dir <folder>', 'where eval folders go (default .manus/evals)')
    .option('--json', 'print eval.json instead of the table')
    .option('--quiet', 'no progress on stderr')
    .option('--ci', 'no questions, no colours, a plain line per run (also when CI=true)')
    .option('--report <folder>', 'write eval.json, manus-junit.xml (a test case per row and model) and manus-report.html (with a page per run) there')
    .action(async (words: string[], options: EvalCommandOptions) => {
      const [first, id] = words;
      if (first === 'resume' && words.length === 2) {
        const { evalResumeCommand } = await import('./eval-command.js');
        return finish(await evalResumeCommand(id, options));
      }
      if (words.length !== 1) throw new UsageError(first === 'resume' ? 'eval resume needs one eval id' : `eval takes one eval file, got: ${words.join(' ')}`);
      const { evalCommand } = await import('./eval-command.js');
      return finish(await evalCommand(first, options));
    });

  program
    .command('worker')
    .description('take batch items from a queue and run them, until stopped')
    .requiredOption('--queue <url>', 'the Redis of the queue, redis://HOST:PORT/DB or rediss:// (a password in the URL or REDIS_PASSWORD)')
    .option('--concurrency <n>', 'items run at once (default: four per core, from 4 to 16)', positiveInteger)
    .option('--trust <grants>', trustHelp, collect, [])
    .option('--runs-dir <folder>', 'where item run folders go (default .manus/runs)')
    .option('--stall-timeout <seconds>', 'how long the item of a worker that died stays locked before another worker takes it over', positiveNumber, 30)
    .option('--models <list>', 'comma-separated profiles or model ids this worker runs items with that ask for one (eval --models, batch --model), resolved with its own configuration')
    .action(async (options: WorkerCommandOptions) => {
      const { workerCommand } = await import('./worker-command.js');
      return finish(await workerCommand(options));
    });

  program
    .command('runs')
    .description('list runs, newest first; `runs show <id>` (or `runs <id>`) prints one run\'s transcript')
    .argument('[words...]', 'show <id>, or an id (a unique prefix is enough)')
    .option('--json', 'print JSON')
    .option('--full', 'with an id: tool arguments, results and check output in full')
    .option('--runs-dir <folder>', 'where run folders are (default .manus/runs)')
    .action(async (words: string[], options: { json?: boolean; full?: boolean; runsDir?: string }) => {
      const { runsCommand, showRunCommand } = await import('./runs-command.js');
      const id = words[0] === 'show' ? words[1] : words[0];
      if (words[0] === 'show' && id === undefined) throw new UsageError('runs show needs a run id');
      return finish(id === undefined ? await runsCommand(options) : await showRunCommand(id, options));
    });

  program
    .command('view')
    .description('write a run\'s, a batch\'s or an eval\'s report as one HTML page and print its path; --serve shows every run in a browser, live')
    .argument('[target]', 'a run id (a unique prefix is enough), a batch id, an eval id or folder, or an events.jsonl file; default the newest run')
    .option('--open', 'open the page (or, with --serve, the server) in the desktop\'s browser')
    .option('--output <file>', 'write the page here instead of into the run or batch folder')
    .option('--serve', 'serve the runs and batches folders read-only on 127.0.0.1, with runs in progress followed live')
    .option('--port <n>', 'the port for --serve (default 7780; 0 picks a free one)', portNumber)
    .option('--runs-dir <folder>', 'where run folders are (default .manus/runs)')
    .option('--batches-dir <folder>', 'where batch folders are (default: batches beside the runs folder)')
    .action(async (target: string | undefined, options: ViewCommandOptions) => {
      const { viewCommand } = await import('./view-command.js');
      return finish(await viewCommand(target, options));
    });

  program
    .command('validate')
    .description('check agents files, recipes, plugins and packs without running a model or a tool (plugins are imported to check their tools; `manus inspect` imports none)')
    .argument('<files...>', 'YAML files, plugin files, and packs (a pack folder, or the name of an installed pack)')
    .option('--json', 'print the diagnostics and their counts as JSON on stdout')
    .action(async (files: string[], options: { json?: boolean }) => {
      const { validateCommand } = await import('./validate-command.js');
      return finish(await validateCommand(files, options));
    });

  program
    .command('inspect')
    .description('show everything a recipe or a pack would use and start, and what needs your consent, without running any of it')
    .argument('<target>', 'a recipe file, <package>/<recipe>, a pack folder or the name of an installed pack')
    .option('--json', 'print the same as one JSON object')
    .action(async (target: string, options: { json?: boolean }) => {
      const { inspectCommand } = await import('./inspect-command.js');
      return finish(await inspectCommand(target, options));
    });

  program
    .command('packs')
    .description('list the packs installed here (in node_modules), with their recipes, agents and tools')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { packsCommand } = await import('./packs-command.js');
      return finish(packsCommand(options));
    });

  program
    .command('pack')
    .description('make packs: `pack init <name>` writes a new one')
    .command('init')
    .description('write a new pack: package.json, a recipe, an agent, a plugin and a test that runs the recipe against a scripted model')
    .argument('<name>', 'the npm package name, e.g. acme-travel or @acme/travel')
    .option('--dir <folder>', 'where to write it (default: the name without its scope)')
    .action(async (name: string, options: { dir?: string }) => {
      const { packInitCommand } = await import('./pack-init-command.js');
      return finish(packInitCommand(name, options, MANUS_VERSION));
    });

  program
    .command('import')
    .description('bring in another agent system\'s configuration: `import openmanus <config.toml>` writes an agents.yaml')
    .command('openmanus')
    .description('write an agents.yaml from OpenManus\'s config.toml (and mcp.json): model profiles, browser, search and sandbox settings, MCP servers; keys become variables to set, never values in the file')
    .argument('<config>', 'OpenManus\'s config/config.toml')
    .option('--mcp <file>', 'OpenManus\'s config/mcp.json, whose servers are added')
    .option('--out <file>', 'where to write the agents file', 'agents.yaml')
    .option('--force', 'replace the file if it exists')
    .addHelpText('after', helpAfter.import!)
    .action(async (config: string, options: ImportCommandOptions) => {
      const { importOpenManusCommand } = await import('./import-command.js');
      return finish(await importOpenManusCommand(config, options));
    });

  program
    .command('tools')
    .description('list the tools the plugins provide, with their parameter schemas')
    .option('--plugins <folder>', 'an extra plugin folder (repeatable)', collect, [])
    .option('--json', 'print JSON')
    .action(async (options: { plugins: string[]; json?: boolean }) => {
      const { listTools } = await import('./list-command.js');
      return finish(await listTools(options));
    });

  const mcp = program
    .command('mcp')
    .description('MCP: serve tools and recipes over the Model Context Protocol, or list the tools of declared MCP servers')
    .addCommand(mcpServeCommand(finish).configureHelp({ optionDescription }));
  mcp
    .command('list')
    .description('start the MCP servers the agents files, your config and the recipe declare, and print their tools and schemas')
    .argument('[recipe]', 'a recipe whose servers to add')
    .option('--trust <grants>', trustHelp, collect, [])
    .option('--json', 'print JSON')
    .action(async (recipe: string | undefined, options: { json?: boolean; trust: string[] }) => {
      const { listMcpServers } = await import('./mcp-list-command.js');
      return finish(await listMcpServers(recipe, options));
    });

  program
    .command('a2a')
    .description('A2A: serve recipes to other agents over the Agent2Agent protocol')
    .addCommand(a2aServeCommand(finish).configureHelp({ optionDescription }));

  program
    .command('agents')
    .description('list the agents declared in agents.yaml files')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { listAgents } = await import('./list-command.js');
      return finish(await listAgents(options));
    });

  program
    .command('doctor')
    .description('check what this machine has for the runtime and its tools, and say how to install what is missing')
    .option('--agent <name>', 'check this agent\'s model profile, sandbox image and tools, with its settings')
    .option('--json', 'print the findings as JSON')
    .action(async (options: { agent?: string; json?: boolean }) => {
      const { doctorCommand } = await import('./doctor-command.js');
      return finish(await doctorCommand(options));
    });

  for (const command of program.commands) {
    // After a usage error, one line pointing at the command's own help rather than all of it.
    command.showHelpAfterError(`see \`manus ${command.name()} --help\``);
    command.addHelpText('after', helpAfter[command.name()] ?? '');
  }
  return program;
}

/** A repeatable option's empty list is no default worth showing: its description says "repeatable". */
function optionDescription(this: Help, option: Option): string {
  if (!Array.isArray(option.defaultValue)) return Help.prototype.optionDescription.call(this, option);
  const withoutDefault = Object.assign(Object.create(Object.getPrototypeOf(option) as object) as Option, option, { defaultValue: undefined });
  return Help.prototype.optionDescription.call(this, withoutDefault);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function positiveNumber(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('expected a number above 0');
  return number;
}

function nonNegativeInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError('expected a whole number of at least 0');
  return number;
}

function portNumber(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return number;
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return number;
}

export function printDiagnostics(diagnostics: Diagnostic[]): void {
  for (const diagnostic of diagnostics) process.stderr.write(terminalText(`${formatDiagnostic(diagnostic)}\n`));
}

function finish(code: number): never {
  process.exit(code);
}

/** Parses the arguments, runs the command and exits with its code. */
export async function runCli(argv: readonly string[]): Promise<never> {
  dropWritesAfterClose();
  try {
    await createProgram().parseAsync([...argv]);
  } catch (error) {
    if (ManusError.isInstance(error)) {
      if (ConfigError.isInstance(error)) printDiagnostics(error.diagnostics);
      else process.stderr.write(terminalText(`manus: ${error.message}\n`));
      process.exit(exitCodeForError(error));
    }
    // A failed system call (a full disk, a missing permission) is a fact to report, not a bug to trace.
    if (isSystemError(error)) process.stderr.write(terminalText(`manus: ${error.message}\n`));
    else process.stderr.write(terminalText(`manus: internal error: ${error instanceof Error ? error.stack : String(error)}\n`));
    process.exit(ExitCode.taskFailed);
  }
  // Every command ends through finish(); reaching here means commander printed help and returned.
  process.exit(ExitCode.success);
}

function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string' && /^E[A-Z]+$/.test(String((error as NodeJS.ErrnoException).code));
}
