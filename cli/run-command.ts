/** `manus run`: resolve the recipe, run it with progress on stderr, print the answer or JSON. */
import { parseParameterArguments, resolveRecipe } from '../runtime/config/resolve-recipe.js';
import { ExitCode, formatDiagnostic, InterruptedError } from '../runtime/errors.js';
import { createProgressReporter } from '../runtime/progress-reporter.js';
import { executeRun, type RunResult } from '../runtime/run.js';
import type { RunCommandOptions } from './main.js';

export async function runCommand(recipeFile: string, options: RunCommandOptions): Promise<number> {
  const plan = await resolveRecipe(recipeFile, {
    cwd: process.cwd(),
    overrides: {
      prompt: options.prompt,
      parameters: parseParameterArguments(options.param),
      model: options.model,
      maxSteps: options.maxSteps,
      workspace: options.workspace,
    },
  });
  for (const warning of plan.warnings) process.stderr.write(`${formatDiagnostic(warning)}\n`);

  const interrupt = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    interrupts += 1;
    // A second Ctrl-C means "now": skip the orderly shutdown.
    if (interrupts > 1) process.exit(ExitCode.interrupted);
    process.stderr.write('\ninterrupting: stopping tools and closing the run (Ctrl-C again to quit at once)\n');
    interrupt.abort(new InterruptedError());
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const isTerminal = process.stderr.isTTY === true;
  const color = isTerminal && !process.env.NO_COLOR && process.env.CI !== 'true';
  const progress = options.quiet ? undefined : createProgressReporter({
    write: (text) => process.stderr.write(text),
    color,
    maxSteps: plan.budgets.steps,
    liveText: isTerminal,
  });
  const result = await executeRun(plan, {
    cwd: process.cwd(),
    environment: process.env,
    signal: interrupt.signal,
    runsDirectory: options.runsDir,
    interactive: process.stdin.isTTY === true && process.env.CI !== 'true',
    answers: options.answer,
    onEvent: progress?.onEvent,
    onTextDelta: progress?.onTextDelta,
  });
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  printResult(result, options.json === true);
  return result.exitCode;
}

function printResult(result: RunResult, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({
      status: result.status,
      exitCode: result.exitCode,
      answer: result.answer,
      structured: result.structured,
      steps: result.steps,
      usage: result.usage,
      exhaustedBudget: result.exhaustedBudget,
      error: result.error,
      runId: result.runId,
      model: result.model,
      runDirectory: result.runDirectory,
      workspace: result.workspace,
      files: result.files,
      durationMs: result.durationMs,
    })}\n`);
    return;
  }
  if (result.status === 'success') {
    process.stdout.write(`${result.answer}\n`);
  } else {
    const what = result.exhaustedBudget ? `the ${result.exhaustedBudget} budget ran out` : result.status;
    process.stderr.write(`manus: run ${result.runId} ended: ${what}: ${result.answer}\n`);
  }
  if (result.files.length > 0) process.stderr.write(`files written in ${result.workspace}:\n${result.files.map((file) => `  ${file}`).join('\n')}\n`);
}
