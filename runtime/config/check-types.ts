/**
 * Success checks: what a recipe declares under `checks:` and what running them reports. A run
 * that finished with status success is only done when every check passes.
 */
import type { Sandbox } from '../contract/sandbox-types.js';
import type { JsonSchema } from '../contract/tool.js';

export type CheckKind = 'command' | 'file' | 'answer' | 'answer_matches';

export type CheckDefinition =
  | { kind: 'command'; name: string; command: string; timeoutSeconds: number }
  | { kind: 'file'; name: string; file: string; schema?: JsonSchema; matches?: string }
  | { kind: 'answer'; name: string }
  | { kind: 'answer_matches'; name: string; pattern: string };

export interface CheckResult {
  name: string;
  kind: CheckKind;
  passed: boolean;
  /** True when the check did not run (the run failed first, or was interrupted); `passed` is then false. */
  skipped?: boolean;
  /** Why it failed, with the command's output; a short confirmation when it passed. */
  detail: string;
  durationMs: number;
}

/** The run's sandbox, or a way to get it that is called only when a command check needs one. */
export type SandboxSource = Sandbox | (() => Promise<Sandbox>);

export interface CheckInput {
  /** Absolute real path of the run's workspace. */
  workspace: string;
  /** The final answer as text. */
  answer: string;
  /** The structured answer, when the recipe declares `response:`. */
  structured?: unknown;
  /** The recipe's `response:` schema. */
  responseSchema?: JsonSchema;
  signal: AbortSignal;
  /** Commands run here; without it they run on the host with /bin/sh. */
  sandbox?: SandboxSource;
}

export interface RetryPolicy {
  /** Attempts in all, the first one included (1 to 10). */
  maxAttempts: number;
  /** A shell command run in the workspace before each retry, for example to reset generated files. */
  onFailure?: string;
}

export function failedChecks(results: readonly CheckResult[]): CheckResult[] {
  return results.filter((result) => !result.passed && !result.skipped);
}
