/** How a run ended, in one word; a run that an error ended takes its status from the kind of error. */
import type { LoopStatus } from '../kernel/agent-loop.js';
import { McpServerUnavailableError } from '../features/mcp/mcp-errors.js';
import { ApprovalNeededError, HumanInputNeededError, InterruptedError, PermissionDeniedError, ProviderError, type ManusError } from '../contract/errors.js';

export type RunStatus = LoopStatus | 'checks-failed' | 'provider-failed' | 'permission-denied' | 'needs-input' | 'tool-source-failed' | 'error';

const runStatuses: ReadonlySet<string> = new Set<RunStatus>(['success', 'failure', 'budget-exhausted', 'stuck', 'interrupted', 'checks-failed', 'provider-failed', 'permission-denied', 'needs-input', 'tool-source-failed', 'error']);

/** Whether `value` is one of the words a run ends with (for statuses read from elsewhere). */
export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === 'string' && runStatuses.has(value);
}

/** The status of a run that `error` ended: `error` for any kind without a status of its own. */
export function failureStatus(error: ManusError): RunStatus {
  if (HumanInputNeededError.isInstance(error) || ApprovalNeededError.isInstance(error)) return 'needs-input';
  if (ProviderError.isInstance(error)) return 'provider-failed';
  if (PermissionDeniedError.isInstance(error)) return 'permission-denied';
  if (InterruptedError.isInstance(error)) return 'interrupted';
  if (McpServerUnavailableError.isInstance(error)) return 'tool-source-failed';
  return 'error';
}

/**
 * How a run that did not succeed ended, for a person: its status, or the budget that ran out, then
 * the reason when it says more (a run stopped by a budget answers with that very sentence).
 */
export function endingText(ending: { status: string; exhaustedBudget?: string }, reason: string | undefined): string {
  const what = ending.exhaustedBudget ? `the ${ending.exhaustedBudget} budget ran out` : ending.status;
  const said = (text: string) => text.trim().replace(/\.$/, '').toLowerCase();
  if (!reason?.trim() || said(reason) === said(what)) return what;
  return `${what}: ${reason}`;
}
