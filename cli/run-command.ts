/** `manus run`: resolve the recipe, run it with progress on stderr, print the answer or JSON. */
import { redactorForPlan } from '../runtime/runs/plan-secrets.js';
import { mkdir } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { isatty } from 'node:tty';
import { literalSecretErrors } from '../runtime/config/literal-secrets.js';
import { loadRecipeFile } from '../runtime/runs/recipe/load-recipe.js';
import { parseParameterArguments, resolveRecipe, type RunPlan } from '../runtime/runs/recipe/resolve-recipe.js';
import { settleTrustRequests } from '../runtime/runs/recipe/trust-consent.js';
import { parseTrustGrants } from '../runtime/contract/trust-grants.js';
import { writeJunitReport, writeNotStartedJunitReport } from '../runtime/applications/reports/junit-report.js';
import { eventsFileName } from '../runtime/runs/run-history.js';
import type { SecretRedactor } from '../runtime/services/secret-redaction.js';
import { writeJsonReport, type RunReport } from '../runtime/applications/reports/run-report.js';
import { ConfigError, formatDiagnostic, ManusError } from '../runtime/contract/errors.js';
import { preloadModelSdk } from '../runtime/services/model/model-client.js';
import { createProgressReporter } from '../runtime/services/progress-reporter.js';
import { executeRun, type RunOptions, type RunResult } from '../runtime/runs/run.js';
import { endingText } from '../runtime/runs/run-status.js';
import { parseCommandLineServer } from '../runtime/features/mcp/command-line-server.js';
import { locateRecipe } from '../runtime/features/packs/locate-recipe.js';
import { exitCodeForError, exitCodeForRun, type ExitCodeValue } from './exit-codes.js';
import { watchInterrupts } from './interrupts.js';
import { terminalText } from '../runtime/services/terminal-text.js';
import type { SandboxSettings } from '../runtime/contract/sandbox-types.js';

export interface RunCommandOptions {
  ci?: boolean;
  trust: string[];
  report?: string;
  prompt?: string;
  param: string[];
  model?: string;
  maxSteps?: number;
  maxTokens?: number;
  maxCost?: number;
  maxTime?: number;
  record?: string;
  answer: string[];
  workspace?: string;
  workspaceFrom?: string;
  sandbox?: SandboxSettings['kind'];
  runsDir?: string;
  json?: boolean;
  quiet?: boolean;
  mcp: string[];
}

export async function runCommand(recipeFile: string, options: RunCommandOptions): Promise<number> {
  const startedAt = new Date().toISOString();
  try {
    return await startRun(recipeFile, options);
  } catch (error) {
    // A run that never started still leaves its JUnit file for the CI step that uploads it.
    if (options.report) await reportNotStarted(recipeFile, error, options.report, startedAt).catch(() => undefined);
    throw error;
  }
}

async function startRun(recipeFile: string, options: RunCommandOptions): Promise<number> {
  const trust = [...parseTrustGrants(options.trust)];
  preloadModelSdk();
  const plan = await resolveRecipe(locateRecipe(recipeFile, process.cwd()).file, {
    cwd: process.cwd(),
    overrides: {
      prompt: options.prompt,
      parameters: parseParameterArguments(options.param),
      model: options.model,
      maxSteps: options.maxSteps,
      maxTokens: options.maxTokens,
      maxCost: options.maxCost,
      maxTimeSeconds: options.maxTime,
      workspace: options.workspace,
      trust,
      sandbox: options.sandbox,
      mcpServers: options.mcp.map((text) => parseCommandLineServer(text, process.cwd())),
    },
  });
  printPlanWarnings(plan, options);
  const result = await runWithProgress(plan, options, { recordFile: options.record, workspaceSource: options.workspaceFrom });
  return result.exitCode;
}

async function reportNotStarted(recipeFile: string, error: unknown, directory: string, startedAt: string): Promise<void> {
  const recipe = { name: basename(recipeFile, extname(recipeFile)), file: recipeFile };
  try {
    recipe.name = loadRecipeFile(locateRecipe(recipeFile, process.cwd()).file).recipe?.name ?? recipe.name;
  } catch {
    // A recipe that cannot be found or read keeps its file's name.
  }
  const failure = ManusError.isInstance(error) ? { code: error.code, message: error.message } : { code: 'error', message: error instanceof Error ? error.message : String(error) };
  const file = await writeNotStartedJunitReport(resolve(directory), { recipe, error: failure, exitCode: exitCodeForError(error), startedAt });
  process.stderr.write(`reports: ${file}\n`);
}

/** Prints the plan's warnings; in CI mode a literal secret in the configuration stops the run before it starts. */
export function printPlanWarnings(plan: RunPlan, options: { ci?: boolean }): void {
  const refused = options.ci === true || isCi() ? literalSecretErrors(plan.warnings) : [];
  if (refused.length > 0) throw new ConfigError(refused);
  for (const warning of plan.warnings) process.stderr.write(terminalText(`${formatDiagnostic(warning)}\n`));
}

export interface ProgressRunOptions {
  answer: string[];
  runsDir?: string;
  json?: boolean;
  quiet?: boolean;
  /** No questions, no colours, plain progress lines; also on when CI=true. */
  ci?: boolean;
  /** A folder for the JSON report and the JUnit XML file. */
  report?: string;
}

/** A run's result with the exit code the CLI gives it, as `--json` prints it and the reports record it. */
export type ReportedRun = RunResult & { exitCode: ExitCodeValue };

/**
 * Runs a plan with progress on stderr and Ctrl-C handling, then prints the outcome. Shared by
 * run, resume and replay, so they report alike.
 */
export async function runWithProgress(plan: RunPlan, options: ProgressRunOptions, extra: Partial<RunOptions> = {}, label?: string): Promise<ReportedRun> {
  const ci = options.ci === true || isCi();
  const interactive = isatty(0) && !ci;
  // Before anything starts, and before Ctrl-C means "stop the run": at this prompt it means quit.
  await settleTrustRequests(plan, { interactive, environment: process.env });
  const interrupts = watchInterrupts('interrupting: stopping tools and closing the run (Ctrl-C again to quit at once)');

  const isTerminal = process.stderr.isTTY === true && !ci;
  const redactor = redactorForPlan(plan, process.env);
  const progress = options.quiet ? undefined : createProgressReporter({
    write: (text) => process.stderr.write(text),
    color: isTerminal && !process.env.NO_COLOR,
    maxSteps: plan.budgets.steps,
    liveText: isTerminal,
    redactor,
  });
  if (label && !options.quiet) process.stderr.write(`${label}\n`);
  const result = await executeRun(plan, {
    cwd: process.cwd(),
    environment: process.env,
    signal: interrupts.signal,
    runsDirectory: options.runsDir,
    interactive,
    answers: options.answer,
    onEvent: progress?.onEvent,
    onTextDelta: progress?.onTextDelta,
    redactor,
    // The events file records the exit code too, for listings and CI that read it.
    endDetails: (ended) => ({ exitCode: exitCodeForRun(ended) }),
    ...extra,
  });
  interrupts.dispose();
  const { runId, status, ...rest } = result;
  const reported: ReportedRun = { runId, status, exitCode: exitCodeForRun(result), ...rest };
  // What is printed and reported is redacted whole; the run's own result stays as it was.
  const shown = redactor.redactValue(reported);
  printResult(shown, options.json === true);
  if (options.report) await writeReports(resolve(options.report), { ...shown, recipe: redactor.redactValue({ name: plan.recipe.name, file: plan.recipe.file }) }, { result, redactor });
  return reported;
}

async function writeReports(directory: string, report: RunReport, { result, redactor }: { result: RunResult; redactor: SecretRedactor }): Promise<void> {
  await mkdir(directory, { recursive: true });
  const written = [await writeJsonReport(directory, report), await writeJunitReport(directory, report)];
  // Loaded only here: a run without --report starts without the page's code.
  const { htmlReportFileName, writeRunHtmlReport } = await import('../runtime/applications/reports/run-html-report.js');
  written.push(await writeRunHtmlReport(join(result.runDirectory, eventsFileName), join(directory, htmlReportFileName), { runDirectory: result.runDirectory, redactor, workspace: result.workspace }));
  process.stderr.write(`reports: ${written.join(', ')}\n`);
}

/** CI mode: no questions asked, no colours, plain progress lines. */
export function isCi(): boolean {
  return process.env.CI === 'true' || process.env.CI === '1' || process.env.MANUS_CI === '1';
}

function printResult(result: RunResult, json: boolean): void {
  for (const check of result.checks.filter((entry) => !entry.passed && !entry.skipped)) {
    process.stderr.write(terminalText(`check failed: ${check.name}: ${check.detail}\n`));
  }
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  if (result.status === 'success') {
    process.stdout.write(`${terminalText(result.answer)}\n`);
  } else {
    process.stderr.write(terminalText(`manus: run ${result.runId} ended: ${endingText(result, result.answer)}\n`));
  }
  if (result.files.length > 0) process.stderr.write(terminalText(`files written in ${result.workspace}:\n${result.files.map((file) => `  ${file}`).join('\n')}\n`));
}
