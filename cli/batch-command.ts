/**
 * `manus batch`: one recipe over many inputs, in this process (the embedded pool) or on workers
 * through a queue; `manus batch resume` runs again the items that did not succeed. Both record the
 * batch in its folder as it goes, show progress on stderr, print the table at the end and write the
 * reports.
 */
import { availableParallelism, hostname } from 'node:os';
import { isatty } from 'node:tty';
import { join, relative, resolve } from 'node:path';
import { BatchBudget } from '../runtime/applications/batch/batch-budget.js';
import { BatchFolder, batchesDirectoryFor, readBatchFolder, repairItemsFile, resolveBatchDirectory, batchTotals, type BatchItemRecord, type BatchRecord } from '../runtime/applications/batch/batch-folder.js';
import { readBatchInputs, type BatchInputs } from '../runtime/applications/batch/batch-inputs.js';
import { runBatch, type ItemExecutor, type ItemWork } from '../runtime/applications/batch/batch-run.js';
import { EmbeddedPool } from '../runtime/applications/batch/embedded-pool.js';
import { itemRetryPolicy } from '../runtime/applications/batch/item-retry.js';
import { collectRunDefinition, type RunDefinition, type RunDefinitionOptions } from '../runtime/applications/batch/run-definition.js';
import { displayQueueUrl } from '../runtime/applications/batch/queue/redis-connection.js';
import { checkItemParameters } from '../runtime/applications/batch/item-parameters.js';
import { parseParameterArguments, resolveRecipe, type RecipeOverrides, type RunPlan } from '../runtime/runs/recipe/resolve-recipe.js';
import { loadRecipeFile } from '../runtime/runs/recipe/load-recipe.js';
import { locateRecipe } from '../runtime/features/packs/locate-recipe.js';
import { continuesFromEvents } from '../runtime/runs/run-resumption.js';
import { processIsAlive } from '../runtime/runs/run-history.js';
import { settleTrustRequests } from '../runtime/runs/recipe/trust-consent.js';
import { parseTrustGrants } from '../runtime/contract/trust-grants.js';
import { UsageError } from '../runtime/contract/errors.js';
import { preloadModelSdk } from '../runtime/services/model/model-client.js';
import { newRunId } from '../runtime/runs/run-preparation.js';
import { redactorForPlan } from '../runtime/runs/plan-secrets.js';
import { batchReport, writeBatchJsonReport, writeBatchJunitReport } from '../runtime/applications/reports/batch-report.js';
import type { SandboxSettings } from '../runtime/contract/tool.js';
import { isInside } from '../runtime/services/workspace-paths.js';
import { knownModelOf, unpricedModelProblem } from '../runtime/services/model/cost-budget-prices.js';
import { createBatchProgress } from './batch-progress.js';
import { printBatchTable } from './batch-table.js';
import { exitCodeForBatch, exitCodeForRun } from './exit-codes.js';
import { watchInterrupts } from './interrupts.js';
import { isCi, printPlanWarnings } from './run-command.js';

export interface BatchOutputOptions {
  batchesDir?: string;
  report?: string;
  ci?: boolean;
  quiet?: boolean;
  json?: boolean;
  trust: string[];
  concurrency?: number;
  queue?: string;
}

export interface BatchCommandOptions extends BatchOutputOptions {
  inputs: string;
  param: string[];
  model?: string;
  sandbox?: SandboxSettings['kind'];
  itemMaxSteps?: number;
  itemMaxTokens?: number;
  itemMaxCost?: number;
  itemMaxTime?: number;
  maxCost?: number;
  maxTokens?: number;
  maxTime?: number;
  retries: number;
}

/**
 * Only a queued batch sends its definition anywhere, with the npm packages its plugins import, and
 * so only it keeps to the files inside its folder and packs; a batch on this machine runs the
 * recipe's files and its plugins' packages where they are, as `manus run` does.
 */
function definitionOptions(queue: string | undefined): RunDefinitionOptions {
  return { shipped: queue !== undefined };
}

/** Everything a batch session runs with, whether it starts the batch or resumes it. */
interface BatchSession {
  folder: BatchFolder;
  record: BatchRecord;
  /** The recipe's file, found from the name given (a file, or a pack's recipe). */
  recipePath: string;
  inputs: BatchInputs;
  earlier: Map<number, BatchItemRecord>;
  work: ItemWork[];
  plan: RunPlan;
  definition: RunDefinition;
  overrides: RecipeOverrides;
  earlierDurationMs: number;
}

export async function batchCommand(recipeFile: string, options: BatchCommandOptions): Promise<number> {
  const cwd = process.cwd();
  const trust = [...parseTrustGrants(options.trust)];
  // A model goes to workers by name, run only by workers whose user offers it; a sandbox is the machine's own.
  if (options.queue && options.sandbox) {
    throw new UsageError('--sandbox cannot go with --queue: the sandbox is what each worker\'s machine has, from its own configuration');
  }
  preloadModelSdk();
  const fixed = parseParameterArguments(options.param);
  const inputs = readBatchInputs(resolve(cwd, options.inputs), options.inputs);
  const overrides: RecipeOverrides = {
    parameters: fixed,
    model: options.model,
    sandbox: options.sandbox,
    trust,
    maxSteps: options.itemMaxSteps,
    maxTokens: options.itemMaxTokens,
    maxCost: options.itemMaxCost,
    maxTimeSeconds: options.itemMaxTime,
  };
  const recipePath = locateRecipe(recipeFile, cwd).file;
  const plan = await checkedPlan(recipePath, inputs, overrides, options);
  if (options.maxCost !== undefined) {
    const problem = await unpricedModelProblem(plan.profile, knownModelOf(plan.profile, plan.modelOverride, process.env));
    if (problem) throw new UsageError(`--max-cost: ${problem}`);
  }
  const definition = collectRunDefinition(plan, cwd, definitionOptions(options.queue));
  const id = newRunId();
  const folder = new BatchFolder(join(batchesDirectoryFor(cwd, process.env, options.batchesDir), id));
  const record: BatchRecord = {
    version: 1,
    id,
    recipe: { name: plan.recipe.name, file: recipeFile, hash: definition.hash },
    createdAt: new Date().toISOString(),
    inputs: { file: options.inputs, count: inputs.items.length },
    concurrency: options.concurrency ?? defaultConcurrency(),
    ...(options.queue ? { queue: displayQueueUrl(options.queue) } : {}),
    budgets: {
      ...(options.maxCost !== undefined ? { maxCost: options.maxCost } : {}),
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
      ...(options.maxTime !== undefined ? { maxTimeSeconds: options.maxTime } : {}),
      item: {
        ...(options.itemMaxSteps !== undefined ? { maxSteps: options.itemMaxSteps } : {}),
        ...(options.itemMaxTokens !== undefined ? { maxTokens: options.itemMaxTokens } : {}),
        ...(options.itemMaxCost !== undefined ? { maxCost: options.itemMaxCost } : {}),
        ...(options.itemMaxTime !== undefined ? { maxTimeSeconds: options.itemMaxTime } : {}),
      },
    },
    status: 'running',
    totals: batchTotals(inputs.items.length, [], 0),
    settings: { cwd, parameters: fixed, model: options.model, sandbox: options.sandbox, retries: options.retries, inputsHash: inputs.hash, pid: process.pid, host: hostname() },
  };
  folder.create(record);
  const work = inputs.items.map((item) => ({ index: item.index, parameters: item.parameters, attemptsBefore: 0 }));
  return runSession({ folder, record, recipePath, inputs, earlier: new Map(), work, plan, definition, overrides, earlierDurationMs: 0 }, options);
}

export async function batchResumeCommand(id: string, options: BatchOutputOptions): Promise<number> {
  const cwd = process.cwd();
  const trust = [...parseTrustGrants(options.trust)];
  preloadModelSdk();
  const directory = resolveBatchDirectory(batchesDirectoryFor(cwd, process.env, options.batchesDir), id);
  repairItemsFile(directory);
  const contents = readBatchFolder(directory);
  for (const warning of contents.warnings) process.stderr.write(`warning: ${warning}\n`);
  const { record } = contents;
  const { settings } = record;
  if (resolve(settings.cwd) !== resolve(cwd)) throw new UsageError(`batch ${record.id} ran in ${settings.cwd}; resume it from there`);
  if (record.status === 'running' && settings.host === hostname() && settings.pid !== process.pid && processIsAlive(settings.pid)) {
    throw new UsageError(`batch ${record.id} is still running (process ${settings.pid}); stop it first, or wait for it to end`);
  }
  if (record.status !== 'running' && record.status !== 'interrupted' && record.totals.succeeded === record.inputs.count) {
    throw new UsageError(`every item of batch ${record.id} succeeded; there is nothing to resume`);
  }
  const inputs = readBatchInputs(resolve(cwd, record.inputs.file), record.inputs.file);
  if (inputs.hash !== settings.inputsHash) throw new UsageError(`the inputs file ${record.inputs.file} changed since batch ${record.id} started; a resumed batch needs the same items`);
  const item = record.budgets.item;
  const overrides: RecipeOverrides = {
    parameters: settings.parameters,
    model: settings.model,
    sandbox: settings.sandbox as SandboxSettings['kind'] | undefined,
    // Grants are never taken from the batch folder: the user gives them again.
    trust,
    maxSteps: item.maxSteps,
    maxTokens: item.maxTokens,
    maxCost: item.maxCost,
    maxTimeSeconds: item.maxTimeSeconds,
  };
  const recipePath = locateRecipe(record.recipe.file, cwd).file;
  const plan = await checkedPlan(recipePath, inputs, overrides, options);
  // A queued batch goes back to its queue, unless the user names another; a URL whose password was masked must be given again.
  const queue = options.queue ?? (record.queue && !record.queue.includes('***') ? record.queue : undefined);
  const definition = collectRunDefinition(plan, cwd, definitionOptions(queue));
  if (definition.hash !== record.recipe.hash) process.stderr.write(`warning: the recipe, its prompts, plugins or agents files changed since batch ${record.id} started; the items left run the changed version\n`);
  record.recipe.hash = definition.hash;
  if (options.concurrency !== undefined) record.concurrency = options.concurrency;
  record.settings = { ...settings, pid: process.pid, host: hostname() };
  const work: ItemWork[] = inputs.items.flatMap((input) => {
    const earlier = contents.items.get(input.index);
    if (earlier?.status === 'success') return [];
    // An item that was interrupted or killed while running continues from its events, when they
    // are here, in the batch's folder: run in this process, or returned by a worker and going back
    // to a queue, whose workers take only their history. A worker's events never run here, where
    // they would choose the recipe and settings.
    const here = earlier?.runDirectory !== undefined && (earlier.worker === undefined || (earlier.events?.stored === 'local' && queue !== undefined));
    const runDirectory = here && isInside(directory, resolve(directory, earlier.runDirectory!)) ? resolve(directory, earlier.runDirectory!) : undefined;
    const resumeFrom = runDirectory && continuesFromEvents(runDirectory) ? runDirectory : undefined;
    return [{ index: input.index, parameters: input.parameters, attemptsBefore: earlier?.attempts ?? 0, endedBefore: earlier !== undefined && earlier.status !== 'running', ...(resumeFrom ? { resumeFrom } : {}) }];
  });
  process.stderr.write(`resuming batch ${record.id}: ${work.length} of ${record.inputs.count} item(s) to run\n`);
  const folder = new BatchFolder(directory);
  if (!queue && record.queue) process.stderr.write(`the batch ran on the queue ${record.queue}, whose password is not recorded; it resumes on this machine (give --queue to resume it there)\n`);
  if (queue) record.queue = displayQueueUrl(queue);
  else delete record.queue;
  return runSession({ folder, record, recipePath, inputs, earlier: contents.items, work, plan, definition, overrides, earlierDurationMs: record.totals.durationMs }, { ...options, queue });
}

/**
 * The plan of the first item, resolved before anything starts: a configuration error stops the
 * batch before any model call, and the grants the recipe asks for are settled once, for all items.
 */
async function checkedPlan(recipeFile: string, inputs: BatchInputs, overrides: RecipeOverrides, options: BatchOutputOptions): Promise<RunPlan> {
  const ci = options.ci === true || isCi();
  // The items' keys first, each problem with its line; the recipe's own errors come with its plan.
  const { recipe } = loadRecipeFile(recipeFile);
  if (recipe) checkItemParameters(recipe, inputs, overrides.parameters ?? {});
  const first = inputs.items[0];
  const plan = await resolveRecipe(recipeFile, { cwd: process.cwd(), overrides: { ...overrides, parameters: { ...first.parameters, ...overrides.parameters } } });
  printPlanWarnings(plan, options);
  await settleTrustRequests(plan, { interactive: isatty(0) && !ci, environment: process.env });
  overrides.trust = [...plan.trustGrants];
  return plan;
}

async function runSession(session: BatchSession, options: BatchOutputOptions): Promise<number> {
  const { folder, record } = session;
  const ci = options.ci === true || isCi();
  const live = process.stderr.isTTY === true && !ci;
  const interrupts = watchInterrupts();
  const progress = options.quiet ? undefined : createBatchProgress({ write: (text) => process.stderr.write(text), live, color: live && !process.env.NO_COLOR });
  if (!options.quiet) process.stderr.write(`batch ${record.id}: recipe '${record.recipe.name}', ${record.inputs.count} item(s), ${session.work.length} to run, ${options.queue ? `on the queue ${record.queue}` : `${record.concurrency} at a time`}\n`);
  const { budgets } = record;
  const budget = new BatchBudget({ tokens: budgets.maxTokens, cost: budgets.maxCost, timeSeconds: budgets.maxTimeSeconds }, session.earlier.size > 0 ? batchTotals(record.inputs.count, session.earlier.values(), 0) : undefined);
  const executor = await executorFor(session, options);
  let outcome;
  try {
    outcome = await runBatch({
      folder,
      record,
      items: session.inputs.items,
      earlier: session.earlier,
      work: session.work,
      executor,
      signal: interrupts.signal,
      budget,
      exitCodeFor: exitCodeForBatch,
      onProgress: progress?.onProgress,
      earlierDurationMs: session.earlierDurationMs,
    });
  } finally {
    interrupts.dispose();
    progress?.end();
  }
  const report = batchReport(outcome.record, outcome.items);
  if (options.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else printBatchTable(report, (text) => process.stdout.write(text), session.inputs.items);
  if (outcome.record.status === 'interrupted') process.stderr.write(`batch ${record.id} was interrupted; continue it with: manus batch resume ${record.id}\n`);
  if (options.report) {
    const directory = resolve(options.report);
    const written = [await writeBatchJsonReport(directory, report), await writeBatchJunitReport(directory, report)];
    // Loaded only here: a batch without --report starts without the page's code.
    const [{ writeBatchHtmlReport }, { htmlReportFileName }] = await Promise.all([import('../runtime/applications/reports/batch-html-report.js'), import('../runtime/applications/reports/run-html-report.js')]);
    written.push((await writeBatchHtmlReport(folder.directory, join(directory, htmlReportFileName), { redactor: redactorForPlan(session.plan, process.env) })).file);
    process.stderr.write(`reports: ${written.map((file) => relative(process.cwd(), file) || file).join(', ')}\n`);
  }
  // What stopped the batch itself is the command's error, once its table and reports are out.
  if (outcome.error !== undefined) throw outcome.error;
  return outcome.record.exitCode ?? 1;
}

async function executorFor(session: BatchSession, options: BatchOutputOptions): Promise<ItemExecutor> {
  const { record } = session;
  if (options.queue) {
    const { QueueExecutor } = await import('../runtime/applications/batch/queue/queue-executor.js');
    return new QueueExecutor({ url: options.queue, environment: process.env, record, definition: session.definition, overrides: session.overrides, retry: itemRetryPolicy(record.settings.retries, process.env), resultsDirectory: session.folder.runsDirectory, exitCodeFor: exitCodeForRun });
  }
  return new EmbeddedPool({
    concurrency: record.concurrency,
    recipeFile: session.recipePath,
    cwd: record.settings.cwd,
    overrides: session.overrides,
    runsDirectory: session.folder.runsDirectory,
    environment: process.env,
    retry: itemRetryPolicy(record.settings.retries, process.env),
    exitCodeFor: exitCodeForRun,
  });
}

/** Runs spend their time waiting for the model, so a few per core keep a machine busy without crowding it. */
export function defaultConcurrency(): number {
  return Math.min(16, Math.max(4, availableParallelism() * 4));
}
