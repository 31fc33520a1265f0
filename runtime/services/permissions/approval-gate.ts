/**
 * How a call that needs approval gets its answer. In order: a decision the user gave when resuming
 * (`--approve` / `--deny`), an approval the user gave earlier for the rest of the run, `on_ask: deny`,
 * then a person: `--answer` values and the terminal (allow once, allow for the rest of the run, or
 * deny with a reason the model sees). With no one to ask, the run either stops, resumable with the
 * call pending, or (batch workers, `manus mcp serve`) tells the model the call was refused.
 */
import { ApprovalNeededError, PermissionDeniedError } from '../../contract/errors.js';
import type { HumanChannel } from '../../contract/tool.js';

export type ApprovalSource = 'resume' | 'run-approval' | 'on-ask' | 'terminal-or-answer' | 'unattended';

export type ApprovalOutcome =
  | { approved: true; by: ApprovalSource; forRun?: boolean }
  | { approved: false; by: ApprovalSource; reason?: string };

export interface ApprovalRequest {
  callId: string;
  tool: string;
  argumentsText: string;
  /** The rule that asked, as written, and why. */
  rule?: string;
  reason: string;
  askBecomesDenial: boolean;
  human: HumanChannel;
  signal: AbortSignal;
}

/** With no one to approve: stop the run (resumable), or refuse the call and go on. */
export type UnansweredApproval = 'stop' | 'deny';

export interface ApprovalGateOptions {
  unanswered: UnansweredApproval;
  /** What the user decided about pending calls when resuming, by call id. */
  decided?: ReadonlyMap<string, { approved: boolean; reason?: string }>;
  /** Approvals for the rest of the run given before a resumption: `tool` + rule keys. */
  runApprovals?: Iterable<string>;
}

export interface ApprovalGate {
  answer(request: ApprovalRequest): Promise<ApprovalOutcome>;
}

export function createApprovalGate(options: ApprovalGateOptions): ApprovalGate {
  const forRun = new Set(options.runApprovals ?? []);
  return {
    async answer(request) {
      const decided = options.decided?.get(request.callId);
      if (decided) return decided.approved ? { approved: true, by: 'resume' } : { approved: false, by: 'resume', reason: decided.reason };
      if (forRun.has(runApprovalKey(request.tool, request.rule))) return { approved: true, by: 'run-approval' };
      if (request.askBecomesDenial) return { approved: false, by: 'on-ask', reason: 'the run refuses every call that needs approval (on_ask: deny)' };
      let reply: string;
      try {
        // Only the user approves: the recipe's answers never reach a permission prompt.
        reply = await request.human.ask(approvalQuestion(request), { required: true, permission: true, signal: request.signal });
      } catch (error) {
        if (!PermissionDeniedError.isInstance(error)) throw error;
        if (options.unanswered === 'deny') return { approved: false, by: 'unattended', reason: 'no one could approve it in this unattended run' };
        throw new ApprovalNeededError(request.callId, request.tool, request.reason);
      }
      const answer = readApproval(reply);
      if (answer.approved && answer.forRun) forRun.add(runApprovalKey(request.tool, request.rule));
      return { ...answer, by: 'terminal-or-answer' };
    },
  };
}

/** What an approval for the rest of the run covers: calls to the tool that the same rule asks about. */
export function runApprovalKey(tool: string, rule: string | undefined): string {
  return `${tool}\u0000${rule ?? ''}`;
}

export function approvalQuestion(request: Pick<ApprovalRequest, 'tool' | 'argumentsText' | 'reason'>): string {
  return [
    `Allow the agent to call ${request.tool} with ${request.argumentsText}?`,
    `(${request.reason})`,
    'y = allow once, a = allow such calls for the rest of the run, n [reason] = deny (the agent is told the reason)',
  ].join('\n');
}

/** A person's reply: `y`/`yes`, `a`/`always`, or a denial with whatever else they wrote as the reason. */
export function readApproval(reply: string): { approved: true; forRun: boolean } | { approved: false; reason?: string } {
  const text = reply.trim();
  if (/^y(es)?$/i.test(text)) return { approved: true, forRun: false };
  if (/^a(lways)?$/i.test(text)) return { approved: true, forRun: true };
  const denial = /^n(o)?\b[\s:,.-]*(.*)$/is.exec(text);
  const reason = (denial ? denial[2] : text).trim();
  return { approved: false, ...(reason ? { reason } : {}) };
}
