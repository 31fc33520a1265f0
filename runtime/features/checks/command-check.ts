/** `{ command }`: passes when the shell command exits with status 0 in the workspace. */
import { errorMessage } from '../../contract/errors.js';
import type { CheckDefinition, CheckInput, CheckResult } from '../../config/check-types.js';
import { describeEnding, runShellCommand } from './shell-command.js';

type CommandCheck = Extract<CheckDefinition, { kind: 'command' }>;

export async function runCommandCheck(check: CommandCheck, input: CheckInput): Promise<CheckResult> {
  const started = performance.now();
  const result = (passed: boolean, detail: string): CheckResult => ({
    name: check.name,
    kind: 'command',
    passed,
    detail,
    durationMs: Math.round(performance.now() - started),
  });
  try {
    const outcome = await runShellCommand(check.command, {
      workspace: input.workspace,
      timeoutSeconds: check.timeoutSeconds,
      signal: input.signal,
      sandbox: input.sandbox,
    });
    const ending = `\`${check.command}\` ${describeEnding(outcome, check.timeoutSeconds)}`;
    const detail = outcome.output === '' ? `${ending}; it printed nothing` : `${ending}; output:\n${outcome.output}`;
    return result(outcome.exitCode === 0, detail);
  } catch (error) {
    return result(false, `\`${check.command}\` could not be run: ${errorMessage(error)}`);
  }
}
