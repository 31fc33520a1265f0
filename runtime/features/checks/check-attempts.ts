/**
 * Attempts until the checks pass: run the agent, and when it finishes with success, run the
 * checks; when some fail and attempts remain, run `retry.on_failure`, then start the next attempt
 * with a prompt listing the failures. The caller supplies the attempt itself, so this works the
 * same for a loop, a flow or a test. Progress goes to the run's trace as `checks` and `retry`
 * events, which `manus runs <id>` shows.
 */
import { checkDefaults } from '../../config/defaults.js';
import { errorMessage } from '../../contract/errors.js';
import type { TraceWriter } from '../../contract/tool.js';
import { failedChecks, type CheckDefinition, type CheckInput, type CheckResult, type RetryPolicy } from '../../config/check-types.js';
import { retryPrompt } from './retry-prompt.js';
import { runChecks, skippedChecks } from './run-checks.js';
import { describeEnding, runShellCommand, sandboxOnce, type ShellCommandOutcome } from './shell-command.js';

export interface AttemptOutcome {
  status: string;
  answer: string;
  structured?: unknown;
}

export interface AttemptSettings<Outcome extends AttemptOutcome> {
  checks: readonly CheckDefinition[];
  retry: RetryPolicy;
  /**
   * Runs one attempt. `retryText` is undefined for the first; for later ones it is the prompt
   * that lists the failed checks, to be given to the agent after the task.
   */
  attempt(retryText: string | undefined, attemptNumber: number): Promise<Outcome>;
  /** Everything the checks need except the answer, which comes from each attempt's outcome. */
  checkInput: Omit<CheckInput, 'answer' | 'structured'>;
  trace?: TraceWriter;
}

export interface AttemptsResult<Outcome extends AttemptOutcome> {
  /** The last attempt's outcome. */
  outcome: Outcome;
  /** The last attempt's check results; skipped entries when the attempt did not succeed. */
  checks: CheckResult[];
  attempts: number;
  /** True when the agent succeeded but checks still failed after the last attempt: the run failed. */
  checksFailed: boolean;
  /** True when the signal was aborted while checks or `on_failure` ran: the run was interrupted, whatever the checks say. */
  interrupted: boolean;
}

export const checksEventType = 'checks';
export const retryEventType = 'retry';

export async function attemptWithChecks<Outcome extends AttemptOutcome>(settings: AttemptSettings<Outcome>): Promise<AttemptsResult<Outcome>> {
  const checkInput = { ...settings.checkInput, sandbox: settings.checkInput.sandbox && sandboxOnce(settings.checkInput.sandbox) };
  let retryText: string | undefined;
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await settings.attempt(retryText, attempt);
    if (outcome.status !== 'success') {
      const checks = skippedChecks(settings.checks, `the run ended with status ${outcome.status}`);
      return { outcome, checks, attempts: attempt, checksFailed: false, interrupted: false };
    }
    if (settings.checks.length === 0) return { outcome, checks: [], attempts: attempt, checksFailed: false, interrupted: false };

    const checks = await runChecks(settings.checks, { ...checkInput, answer: outcome.answer, structured: outcome.structured });
    const failures = failedChecks(checks);
    settings.trace?.emit(checksEventType, { attempt, passed: failures.length === 0, results: checks });
    // An interrupt that came after every check had passed changes nothing.
    const interrupted = checkInput.signal.aborted && (failures.length > 0 || checks.some((check) => check.skipped === true));
    if (interrupted || failures.length === 0) return { outcome, checks, attempts: attempt, checksFailed: failures.length > 0, interrupted };
    if (attempt >= settings.retry.maxAttempts) return { outcome, checks, attempts: attempt, checksFailed: true, interrupted: false };

    const preparation = settings.retry.onFailure === undefined ? undefined : await prepareRetry(settings.retry.onFailure, checkInput);
    if (checkInput.signal.aborted) return { outcome, checks, attempts: attempt, checksFailed: true, interrupted: true };
    retryText = retryPrompt(failures);
    settings.trace?.emit(retryEventType, {
      attempt: attempt + 1,
      failedChecks: failures.map((failure) => failure.name),
      onFailure: preparation,
    });
  }
}

/** Runs `retry.on_failure`. Its failure is recorded, not fatal: the next attempt may still fix things. */
async function prepareRetry(
  command: string,
  input: Omit<CheckInput, 'answer' | 'structured'>,
): Promise<{ command: string; ending: string; output: string }> {
  // `retry.on_failure` has no timeout of its own: it gets the one a command check has by default.
  const timeoutSeconds = checkDefaults.timeout_seconds;
  let outcome: ShellCommandOutcome;
  try {
    outcome = await runShellCommand(command, { workspace: input.workspace, timeoutSeconds, signal: input.signal, sandbox: input.sandbox });
  } catch (error) {
    return { command, ending: `could not be run: ${errorMessage(error)}`, output: '' };
  }
  return { command, ending: describeEnding(outcome, timeoutSeconds), output: outcome.output };
}
