/**
 * Runs a recipe's checks one after another, all of them even after a failure, so the report and
 * the retry prompt list every problem at once. An interrupt skips the checks not yet started.
 */
import { runAnswerCheck } from './answer-check.js';
import type { CheckDefinition, CheckInput, CheckResult } from '../../config/check-types.js';
import { runCommandCheck } from './command-check.js';
import { runFileCheck } from './file-check.js';
import { sandboxOnce } from './shell-command.js';

export async function runChecks(checks: readonly CheckDefinition[], input: CheckInput): Promise<CheckResult[]> {
  const shared: CheckInput = { ...input, sandbox: input.sandbox && sandboxOnce(input.sandbox) };
  const results: CheckResult[] = [];
  for (const [index, check] of checks.entries()) {
    if (input.signal.aborted) return [...results, ...skippedChecks(checks.slice(index), 'the run was interrupted')];
    results.push(await runCheck(check, shared));
  }
  return results;
}

/** Results for checks that did not run, for reports that list every check. */
export function skippedChecks(checks: readonly CheckDefinition[], reason: string): CheckResult[] {
  return checks.map((check) => ({ name: check.name, kind: check.kind, passed: false, skipped: true, detail: reason, durationMs: 0 }));
}

function runCheck(check: CheckDefinition, input: CheckInput): Promise<CheckResult> | CheckResult {
  switch (check.kind) {
    case 'command':
      return runCommandCheck(check, input);
    case 'file':
      return runFileCheck(check, input);
    case 'answer':
    case 'answer_matches':
      return runAnswerCheck(check, input);
  }
}
