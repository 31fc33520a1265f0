/**
 * `manus eval`: a recipe over an eval's rows, on each model, k times, every run a batch item (the
 * pool, budgets, resume and rate limit of batches); then every run scored, each model summarised
 * with its intervals, compared with a baseline and gated. `manus eval resume <id>` runs what did not
 * end; `--replay` scores a recorded eval again without a model.
 */
import { existsSync, mkdirSync, writeFileSync, renameSync } from 'node:fs';
import { hostname } from 'node:os';
import { isatty } from 'node:tty';
import { join, relative, resolve } from 'node:path';
import { BatchBudget } from '../runtime/applications/batch/batch-budget.js';
import { BatchFolder, batchTotals, readBatchFolder, repairItemsFile, resolveBatchDirectory, type BatchItemRecord, type BatchRecord } from '../runtime/applications/batch/batch-folder.js';
import { runBatch, type ItemExecutor, type ItemWork } from '../runtime/applications/batch/batch-run.js';
import { collectRunDefinition } from '../runtime/applications/batch/run-definition.js';
import { displayQueueUrl } from '../runtime/applications/batch/queue/redis-connection.js';
import { itemRetryPolicy } from '../runtime/applications/batch/item-retry.js';
import { checkRowParameters, loadEvalFile, type EvalDefinition } from '../runtime/applications/eval/eval-file.js';
import { evalMatrix, matrixInputs, modelLabel, type EvalMatrix } from '../runtime/applications/eval/eval-matrix.js';
import { evalPool } from '../runtime/applications/eval/eval-pool.js';
import { compareWithBaseline, evalDefinitionSummary, evalItemResults, evalRecordFileName, modelSummaries, readEvalRecord, readRecordedItems, type EvalRecord } from '../runtime/applications/eval/eval-record.js';
import { evaluateGates, parseMinimumScores } from '../runtime/applications/eval/eval-gates.js';
import { evalTableText } from '../runtime/applications/eval/eval-table.js';
import { createJudge, judgeProfiles, judgeTrustRequests } from '../runtime/applications/eval/judge.js';
import { ReplyCache, replyCacheDirectory, type ReplyCacheCounts } from '../runtime/applications/eval/reply-cache.js';
import { scoreItems } from '../runtime/applications/eval/score-items.js';
import { resolveRecipe, type RecipeOverrides, type RunPlan } from '../runtime/runs/recipe/resolve-recipe.js';
import { loadRecipeFile } from '../runtime/runs/recipe/load-recipe.js';
import { locateRecipe } from '../runtime/features/packs/locate-recipe.js';
import { settleTrustRequests } from '../runtime/runs/recipe/trust-consent.js';
import { continuesFromEvents } from '../runtime/runs/run-resumption.js';
import { processIsAlive } from '../runtime/runs/run-history.js';
import { newRunId } from '../runtime/runs/run-preparation.js';
import { redactorForPlan } from '../runtime/runs/plan-secrets.js';
import { parseTrustGrants } from '../runtime/contract/trust-grants.js';
import { UsageError } from '../runtime/contract/errors.js';
import { htmlReportFileName } from '../runtime/applications/reports/run-html-report.js';
import { SecretRedactor } from '../runtime/services/secret-redaction.js';
import { preloadModelSdk } from '../runtime/services/model/model-client.js';
import { knownModelOf, unpricedModelProblem } from '../runtime/services/model/cost-budget-prices.js';
import { isInside } from '../runtime/services/workspace-paths.js';
import { createBatchProgress } from './batch-progress.js';
import { currentRedactor } from './current-redactor.js';
import { defaultConcurrency } from './batch-command.js';
import { ExitCode, exitCodeForBatch, exitCodeForRun } from './exit-codes.js';
import { watchInterrupts } from './interrupts.js';
import { isCi, printPlanWarnings } from './run-command.js';

export interface EvalOutputOptions {
  evalsDir?: string;
  report?: string;
  ci?: boolean;
  quiet?: boolean;
  json?: boolean;
  trust: string[];
  concurrency?: number;
  queue?: string;
  cache?: boolean;
  minScore?: string;
  baseline?: string;
}

export interface EvalCommandOptions extends EvalOutputOptions {
  models?: string;
  repeat?: number;
  replay?: string;
  itemMaxSteps?: number;
  itemMaxTime?: number;
  maxCost?: number;
  maxTokens?: number;
  maxTime?: number;
}

/** What `manus eval resume` needs, kept in eval.json; grants are never kept: the user gives them again. */
interface EvalSettings {
  cwd: string;
  file: string;
  hash: string;
  models: Array<string | null>;
  repeat: number;
  cache: boolean;
  item: { maxSteps?: number; maxTimeSeconds?: number };
}

type StoredEvalRecord = EvalRecord & { settings?: EvalSettings };

export function evalsDirectoryFor(cwd: string, environment: Record<string, string | undefined>, evalsDirectory?: string): string {
  return resolve(cwd, evalsDirectory ?? environment.MANUS_EVALS_DIR ?? join('.manus', 'evals'));
}

export async function evalCommand(file: string, options: EvalCommandOptions): Promise<number> {
  const cwd = process.cwd();
  const definition = await loadEvalFile(resolve(cwd, file));
  const models = options.models ? [...new Set(options.models.split(',').map((model) => model.trim()).filter(Boolean))] : [undefined];
  if (models.length === 0) throw new UsageError('--models names no model');
  const repeat = options.repeat ?? 1;
  if (options.replay) return replayCommand(definition, file, options);
  preloadModelSdk();
  const settings: EvalSettings = {
    cwd,
    file,
    hash: definition.hash,
    models: models.map((model) => model ?? null),
    repeat,
    cache: options.cache === true,
    item: { ...(options.itemMaxSteps !== undefined ? { maxSteps: options.itemMaxSteps } : {}), ...(options.itemMaxTime !== undefined ? { maxTimeSeconds: options.itemMaxTime } : {}) },
  };
  const matrix = evalMatrix(definition.rows, models, repeat);
  const prepared = await prepare(definition, matrix, settings, options);
  if (options.maxCost !== undefined) {
    for (const plan of prepared.plans) {
      const problem = await unpricedModelProblem(plan.profile, knownModelOf(plan.profile, plan.modelOverride, process.env));
      if (problem) throw new UsageError(`--max-cost: ${problem}`);
    }
  }
  const id = newRunId();
  const folder = new BatchFolder(join(evalsDirectoryFor(cwd, process.env, options.evalsDir), id));
  const record: BatchRecord = {
    version: 1,
    id,
    recipe: { name: prepared.plans[0].recipe.name, file: definition.recipe, hash: definition.hash },
    createdAt: new Date().toISOString(),
    inputs: { file, count: matrix.cells.length },
    concurrency: options.concurrency ?? defaultConcurrency(),
    ...(options.queue ? { queue: displayQueueUrl(options.queue) } : {}),
    budgets: {
      ...(options.maxCost !== undefined ? { maxCost: options.maxCost } : {}),
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
      ...(options.maxTime !== undefined ? { maxTimeSeconds: options.maxTime } : {}),
      item: settings.item,
    },
    status: 'running',
    totals: batchTotals(matrix.cells.length, [], 0),
    settings: { cwd, parameters: {}, retries: 0, inputsHash: definition.hash, pid: process.pid, host: hostname() },
  };
  folder.create(record);
  writeEvalRecord(folder.directory, { ...startingRecord(id, definition, matrix, file), settings });
  const work = matrix.cells.map((cell) => ({ index: cell.index, parameters: matrix.rows[cell.rowIndex].parameters, attemptsBefore: 0 }));
  return runSession({ folder, record, definition, matrix, settings, prepared, earlier: new Map(), work, createdAt: record.createdAt }, options);
}

export async function evalResumeCommand(id: string, options: EvalOutputOptions): Promise<number> {
  const cwd = process.cwd();
  preloadModelSdk();
  const directory = resolveBatchDirectory(evalsDirectoryFor(cwd, process.env, options.evalsDir), id);
  repairItemsFile(directory);
  const contents = readBatchFolder(directory);
  for (const warning of contents.warnings) process.stderr.write(`warning: ${warning}\n`);
  const stored = readEvalRecord(join(directory, evalRecordFileName)) as StoredEvalRecord;
  const settings = stored.settings;
  if (!settings) throw new UsageError(`eval ${stored.id} is a replay; there is nothing to resume`);
  const { record } = contents;
  if (resolve(settings.cwd) !== resolve(cwd)) throw new UsageError(`eval ${record.id} ran in ${settings.cwd}; resume it from there`);
  if (record.status === 'running' && record.settings.host === hostname() && record.settings.pid !== process.pid && processIsAlive(record.settings.pid)) {
    throw new UsageError(`eval ${record.id} is still running (process ${record.settings.pid}); stop it first, or wait for it to end`);
  }
  const definition = await loadEvalFile(resolve(cwd, settings.file));
  if (definition.hash !== settings.hash) throw new UsageError(`the eval file ${settings.file} or its dataset changed since eval ${record.id} started; a resumed eval needs the same rows (start a new eval instead)`);
  const matrix = evalMatrix(definition.rows, settings.models.map((model) => model ?? undefined), settings.repeat);
  const prepared = await prepare(definition, matrix, settings, options);
  if (options.queue) record.queue = displayQueueUrl(options.queue);
  else delete record.queue;
  const work: ItemWork[] = matrix.cells.flatMap((cell) => {
    const earlier = contents.items.get(cell.index);
    if (earlier && endedForGood(earlier)) return [];
    const runDirectory = earlier?.runDirectory && isInside(directory, resolve(directory, earlier.runDirectory)) ? resolve(directory, earlier.runDirectory) : undefined;
    const resumeFrom = runDirectory && continuesFromEvents(runDirectory) ? runDirectory : undefined;
    return [{ index: cell.index, parameters: matrix.rows[cell.rowIndex].parameters, attemptsBefore: earlier?.attempts ?? 0, endedBefore: earlier !== undefined && earlier.status !== 'running', ...(resumeFrom ? { resumeFrom } : {}) }];
  });
  if (work.length === 0 && record.status !== 'interrupted' && record.status !== 'running') throw new UsageError(`every run of eval ${record.id} ended; there is nothing to resume`);
  process.stderr.write(`resuming eval ${record.id}: ${work.length} of ${matrix.cells.length} run(s) to go\n`);
  if (options.concurrency !== undefined) record.concurrency = options.concurrency;
  record.settings = { ...record.settings, pid: process.pid, host: hostname() };
  return runSession({ folder: new BatchFolder(directory), record, definition, matrix, settings, prepared, earlier: contents.items, work, createdAt: stored.createdAt, earlierDurationMs: record.totals.durationMs }, { ...options, cache: options.cache ?? settings.cache });
}

/**
 * A run whose ending measures the recipe (it answered, well or badly) is a result; one the
 * provider, an interrupt or the eval's own budget cut short is run again by a resume.
 */
function endedForGood(item: BatchItemRecord): boolean {
  return ['success', 'failure', 'checks-failed', 'stuck'].includes(item.status);
}

interface Prepared {
  plans: RunPlan[];
  overrides: RecipeOverrides;
  recipePath: string;
  judge: ReturnType<typeof judgeProfiles>;
}

/**
 * Every model's plan resolved before anything runs: a configuration error stops the eval before
 * any model call, and what the recipe and the judges ask the user to grant is settled once.
 */
async function prepare(definition: EvalDefinition, matrix: EvalMatrix, settings: EvalSettings, options: EvalOutputOptions): Promise<Prepared> {
  const cwd = process.cwd();
  const ci = options.ci === true || isCi();
  const recipePath = locateRecipe(definition.recipeArgument, cwd).file;
  const { recipe } = loadRecipeFile(recipePath);
  if (recipe) checkRowParameters(recipe, definition);
  const overrides: RecipeOverrides = {
    parameters: {},
    trust: [...parseTrustGrants(options.trust)],
    maxSteps: settings.item.maxSteps,
    maxTimeSeconds: settings.item.maxTimeSeconds,
  };
  const plans: RunPlan[] = [];
  for (const model of matrix.models) {
    plans.push(await resolveRecipe(recipePath, { cwd, overrides: { ...overrides, ...(model !== undefined ? { model } : {}), parameters: { ...definition.rows[0].parameters } } }));
  }
  const first = plans[0];
  printPlanWarnings(first, options);
  const modelsUnderTest = matrix.models.map((model, index) => model ?? plans[index].profile.name);
  const judge = judgeProfiles(definition.scorers, definition.judge, first.agentsConfig.profiles, modelsUnderTest);
  // The judges' endpoints are asked for with the recipe's own requests, in one question.
  first.trustRequests = [...first.trustRequests, ...plans.slice(1).flatMap((plan) => plan.trustRequests), ...judgeTrustRequests(judge)];
  await settleTrustRequests(first, { interactive: isatty(0) && !ci, environment: process.env });
  overrides.trust = [...first.trustGrants];
  return { plans, overrides, recipePath, judge };
}

interface EvalSession {
  folder: BatchFolder;
  record: BatchRecord;
  definition: EvalDefinition;
  matrix: EvalMatrix;
  settings: EvalSettings;
  prepared: Prepared;
  earlier: Map<number, BatchItemRecord>;
  work: ItemWork[];
  createdAt: string;
  earlierDurationMs?: number;
}

async function runSession(session: EvalSession, options: EvalOutputOptions): Promise<number> {
  const { folder, record, matrix, definition } = session;
  const ci = options.ci === true || isCi();
  const live = process.stderr.isTTY === true && !ci;
  const interrupts = watchInterrupts();
  const progress = options.quiet ? undefined : createBatchProgress({ write: (text) => process.stderr.write(text), live, color: live && !process.env.NO_COLOR });
  if (!options.quiet) {
    process.stderr.write(`eval ${record.id}: '${definition.name}' on ${matrix.models.map(modelLabel).join(', ')}, ${matrix.rows.length} row(s) × ${matrix.repeat} repeat(s), ${session.work.length} run(s) to go, ${options.queue ? `on the queue ${record.queue}` : `${record.concurrency} at a time`}\n`);
  }
  const { budgets } = record;
  const budget = new BatchBudget({ tokens: budgets.maxTokens, cost: budgets.maxCost, timeSeconds: budgets.maxTimeSeconds }, session.earlier.size > 0 ? batchTotals(record.inputs.count, session.earlier.values(), 0) : undefined);
  // On a queue the replies are kept where they are made, in each worker's own cache; workers say what it gave.
  const cache = options.cache && !options.queue ? new ReplyCache(replyCacheDirectory(session.settings.cwd)) : undefined;
  const cacheCounts = cache?.counts ?? (options.cache ? { hits: 0, misses: 0 } : undefined);
  const executor: ItemExecutor = options.queue ? await queueExecutor(session, options.queue, cacheCounts) : evalPool({
    concurrency: record.concurrency,
    recipeFile: session.prepared.recipePath,
    cwd: session.settings.cwd,
    overrides: session.prepared.overrides,
    runsDirectory: folder.runsDirectory,
    environment: process.env,
    retry: itemRetryPolicy(0, process.env),
    exitCodeFor: exitCodeForRun,
    cellOf: (index) => matrix.cells[index],
    ...(cache ? { cache } : {}),
  });
  let outcome;
  try {
    outcome = await runBatch({
      folder,
      record,
      items: matrixInputs(matrix),
      earlier: session.earlier,
      work: session.work,
      executor,
      signal: interrupts.signal,
      budget,
      exitCodeFor: exitCodeForBatch,
      onProgress: progress?.onProgress,
      earlierDurationMs: session.earlierDurationMs ?? 0,
    });
  } finally {
    interrupts.dispose();
    progress?.end();
  }
  const records = new Map(outcome.items.map((item) => [item.index, item]));
  const redact = evalRedaction(session.prepared);
  const judge = session.prepared.judge.size > 0
    ? createJudge({ profiles: session.prepared.judge, defaultJudge: definition.judge, environment: process.env, redactor: SecretRedactor.forProfiles(session.prepared.judge.values(), process.env), ...(cache ? { cache } : {}) })
    : undefined;
  const scored = await scoreItems({ definition, matrix, records, runsBase: folder.directory, cwd: session.settings.cwd, ...(judge ? { judge } : {}) });
  const items = evalItemResults(matrix, scored);
  const unredacted: StoredEvalRecord = {
    ...startingRecord(record.id, definition, matrix, session.settings.file),
    createdAt: session.createdAt,
    finishedAt: new Date().toISOString(),
    // Runs that answered badly are results: the eval completed once every run ended, however.
    status: outcome.record.status === 'success' || outcome.record.status === 'failure' ? 'completed' : outcome.record.status,
    ...(cacheCounts ? { cache: { ...cacheCounts } } : {}),
    items,
    summary: modelSummaries(matrix, items, records),
    settings: session.settings,
  };
  const exitCode = finishRecord(unredacted, options, exitCodeOf(outcome.record.status, items));
  // Answers were redacted as the batch recorded them; judges' reasons and errors are redacted here, with every model's keys and the judges'.
  const result = redact(unredacted);
  writeEvalRecord(folder.directory, result);
  await printAndReport(result, folder.directory, options);
  if (outcome.record.status === 'interrupted') process.stderr.write(`eval ${record.id} was interrupted; continue it with: manus eval resume ${record.id}\n`);
  if (outcome.error !== undefined) throw outcome.error;
  return exitCode;
}

/** Hides the keys of every model under test, of the judges, and what the recipe hands its sandbox and servers. */
function evalRedaction(prepared: Prepared): <T>(value: T) => T {
  const redactors = [...prepared.plans.map((plan) => redactorForPlan(plan, process.env)), SecretRedactor.forProfiles(prepared.judge.values(), process.env)];
  return (value) => redactors.reduce((current, redactor) => redactor.redactValue(current), value);
}

/**
 * The eval's runs on workers: each job names its cell's model, which a worker runs only when its
 * own user offers that name, resolved with its own configuration; with `--cache`, the worker's
 * cache answers it as this repeat of its cell, and the counts come back with the result.
 */
async function queueExecutor(session: EvalSession, url: string, cacheCounts: ReplyCacheCounts | undefined): Promise<ItemExecutor> {
  const { QueueExecutor } = await import('../runtime/applications/batch/queue/queue-executor.js');
  const definition = collectRunDefinition(session.prepared.plans[0], session.settings.cwd, { shipped: true });
  session.record.recipe.hash = definition.hash;
  return new QueueExecutor({
    url,
    environment: process.env,
    record: session.record,
    definition,
    overrides: session.prepared.overrides,
    retry: itemRetryPolicy(0, process.env),
    resultsDirectory: session.folder.runsDirectory,
    exitCodeFor: exitCodeForRun,
    itemRequest: (item) => {
      const cell = session.matrix.cells[item.index];
      return { ...(cell.model !== undefined ? { model: cell.model } : {}), ...(cacheCounts ? { replyCache: { repeat: cell.repeat } } : {}) };
    },
    ...(cacheCounts ? {
      replyCacheCounted: (counts: ReplyCacheCounts) => {
        cacheCounts.hits += counts.hits;
        cacheCounts.misses += counts.misses;
      },
    } : {}),
  });
}

/** Interrupted 130, a budget 3, a provider that kept failing 4; otherwise the gates decide. */
function exitCodeOf(status: BatchRecord['status'], items: EvalRecord['items']): number {
  if (status === 'interrupted') return ExitCode.interrupted;
  if (status === 'budget-exhausted') return ExitCode.budgetExhausted;
  if (items.some((item) => item.status === 'provider-failed')) return ExitCode.providerFailed;
  return ExitCode.success;
}

/** The gates, then the exit code: a failed gate is exit 1 unless the eval already ended worse. */
function finishRecord(result: EvalRecord, options: EvalOutputOptions, runExitCode: number): number {
  const baseline = options.baseline ? compareWithBaseline(options.baseline, readEvalRecord(resolve(options.baseline)), result.items, result.models) : undefined;
  if (baseline) result.baseline = baseline;
  result.gates = evaluateGates(result.summary, { ...(options.minScore ? { minimum: parseMinimumScores(options.minScore) } : {}), ...(baseline ? { baseline } : {}) });
  const gatesFailed = result.gates.some((gate) => !gate.passed);
  result.exitCode = runExitCode !== ExitCode.success ? runExitCode : gatesFailed ? ExitCode.taskFailed : ExitCode.success;
  return result.exitCode;
}

async function printAndReport(result: EvalRecord, directory: string, options: EvalOutputOptions): Promise<void> {
  if (options.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else process.stdout.write(evalTableText(result, { color: process.stdout.isTTY === true && !process.env.NO_COLOR && !(options.ci === true || isCi()) }));
  for (const gate of result.gates.filter((each) => !each.passed)) process.stderr.write(`gate failed: ${gate.gate}: ${gate.message}\n`);
  if (!options.report) return;
  const target = resolve(options.report);
  const [{ writeEvalJunitReport }, { writeEvalHtmlReport }] = await Promise.all([import('../runtime/applications/eval/eval-junit.js'), import('../runtime/applications/eval/eval-html-report.js')]);
  mkdirSync(target, { recursive: true });
  const written = [
    await writeEvalJsonCopy(target, result),
    await writeEvalJunitReport(target, result),
    await writeEvalHtmlReport(directory, join(target, htmlReportFileName), result),
  ];
  process.stderr.write(`reports: ${written.map((each) => relative(process.cwd(), each) || each).join(', ')}\n`);
}

async function writeEvalJsonCopy(directory: string, result: EvalRecord): Promise<string> {
  const { settings: _settings, ...shared } = result as StoredEvalRecord;
  const file = join(directory, evalRecordFileName);
  writeAtomically(file, `${JSON.stringify(shared, null, 2)}\n`);
  return file;
}

function startingRecord(id: string, definition: EvalDefinition, matrix: EvalMatrix, file: string): EvalRecord {
  return {
    version: 1,
    id,
    ...evalDefinitionSummary(definition),
    file,
    models: matrix.models.map(modelLabel),
    repeat: matrix.repeat,
    createdAt: new Date().toISOString(),
    status: 'running',
    items: [],
    summary: [],
    gates: [],
  };
}

function writeEvalRecord(directory: string, record: StoredEvalRecord): void {
  writeAtomically(join(directory, evalRecordFileName), `${JSON.stringify(record, null, 2)}\n`);
}

function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/**
 * Scores a recorded eval again with the eval file's scorers as they are now: no model is asked
 * (a judge excepted), and the runs stay where they were recorded. The result is an eval of its
 * own, in its own folder, naming the recording its runs come from.
 */
async function replayCommand(definition: EvalDefinition, file: string, options: EvalCommandOptions): Promise<number> {
  const cwd = process.cwd();
  const source = existsSync(resolve(cwd, options.replay!, evalRecordFileName)) ? resolve(cwd, options.replay!) : resolveBatchDirectory(evalsDirectoryFor(cwd, process.env, options.evalsDir), options.replay!);
  const recorded = readEvalRecord(join(source, evalRecordFileName));
  const recordedItems = readRecordedItems(source);
  const models = options.models ? options.models.split(',').map((model) => model.trim()).filter(Boolean) : recorded.models;
  const unknown = models.filter((model) => !recorded.models.includes(model));
  if (unknown.length > 0) throw new UsageError(`the recording ${relative(cwd, source) || source} has no runs of ${unknown.join(', ')}; it has ${recorded.models.join(', ')}`);
  const matrix = evalMatrix(definition.rows, models, options.repeat ?? recorded.repeat);
  // Cells are matched by row, model and repeat, so rows added since the recording show as not run.
  const byCell = new Map(recorded.items.map((item) => [`${item.row}\u0000${item.model}\u0000${item.repeat}`, item.index]));
  const records = new Map<number, BatchItemRecord>();
  for (const cell of matrix.cells) {
    const index = byCell.get(`${cell.row}\u0000${modelLabel(cell.model)}\u0000${cell.repeat + 1}`);
    const line = index === undefined ? undefined : recordedItems.get(index);
    if (line) records.set(cell.index, { ...line, index: cell.index });
  }
  const judgeNeeded = definition.scorers.some((scorer) => scorer.type === 'judge');
  let judge;
  let replayRedactor = currentRedactor();
  if (judgeNeeded) {
    const plan = await resolveRecipe(locateRecipe(definition.recipeArgument, cwd).file, { cwd, overrides: { parameters: { ...definition.rows[0].parameters }, trust: [...parseTrustGrants(options.trust)] } });
    const profiles = judgeProfiles(definition.scorers, definition.judge, plan.agentsConfig.profiles, models);
    plan.trustRequests = judgeTrustRequests(profiles);
    await settleTrustRequests(plan, { interactive: isatty(0) && !(options.ci === true || isCi()), environment: process.env });
    replayRedactor = SecretRedactor.forProfiles([plan.profile, ...profiles.values()], process.env);
    judge = createJudge({ profiles, defaultJudge: definition.judge, environment: process.env, redactor: replayRedactor, ...(options.cache ? { cache: new ReplyCache(replyCacheDirectory(cwd)) } : {}) });
  }
  const scored = await scoreItems({ definition, matrix, records, runsBase: source, cwd: recordedCwd(source, cwd), ...(judge ? { judge } : {}) });
  const items = evalItemResults(matrix, scored);
  const id = newRunId();
  const directory = join(evalsDirectoryFor(cwd, process.env, options.evalsDir), id);
  mkdirSync(directory, { recursive: true });
  const result: EvalRecord = {
    ...startingRecord(id, definition, matrix, file),
    finishedAt: new Date().toISOString(),
    status: 'replayed',
    runsFrom: relative(directory, source),
    items,
    summary: modelSummaries(matrix, items, records),
  };
  const exitCode = finishRecord(result, options, ExitCode.success);
  Object.assign(result, replayRedactor.redactValue(result));
  writeEvalRecord(directory, result);
  if (!options.quiet) process.stderr.write(`eval ${id}: '${definition.name}' scored again from the recording ${relative(cwd, source) || source}, no model asked\n`);
  await printAndReport(result, directory, options);
  return exitCode;
}

/**
 * Runs record their workspace relative to the folder they ran in. A recording shipped with the
 * project ran in the project's root; one in `.manus/evals/` ran where `.manus` is.
 */
function recordedCwd(source: string, cwd: string): string {
  const marker = `${join('.manus', 'evals')}`;
  const at = source.lastIndexOf(marker);
  return at > 0 ? source.slice(0, at - 1) : cwd;
}
