/**
 * Reading a run back from its events file: the history to resume from, what it had spent, and the
 * model's replies and tool results to replay. A run killed mid-write leaves half a line at the
 * end; it is skipped with a warning, never trusted.
 */
import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, statSync } from 'node:fs';
import type { ResumeState } from '../kernel/agent-loop.js';
import { applyCompaction, applyDrop } from '../kernel/context-compaction.js';
import { UsageError } from '../contract/errors.js';
import type { RawToolCall } from '../contract/model-types.js';
import type { ChatMessage, ToolResult } from '../contract/tool.js';
import { addUsage, zeroUsage, type TokenUsage } from '../contract/token-usage.js';
import { runApprovalKey } from '../services/permissions/approval-gate.js';

export interface RunEvent {
  type: string;
  time?: string;
  [key: string]: any;
}

export interface RecordedRun {
  file: string;
  events: RunEvent[];
  warnings: string[];
  start: RunEvent;
  end?: RunEvent;
}

export const interruptedCallResult =
  'This call was interrupted when the run stopped, and may have partly run. It was not run again: ' +
  'check its effects before repeating it.';

/** Reads an events file. `repair` cuts a half-written last line off the file so it can be appended to again. */
export function readRecordedRun(file: string, options: { repair?: boolean } = {}): RecordedRun {
  if (!existsSync(file) || !statSync(file).isFile()) throw new UsageError(`no events file at ${file}`);
  const text = readFileSync(file, 'utf8');
  const warnings: string[] = [];
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  if (last.trim() !== '') {
    warnings.push(`the last line of ${file} was cut off (the run was stopped while writing it); it was skipped`);
    if (options.repair) truncateTo(file, Buffer.byteLength(text) - Buffer.byteLength(last));
  }
  const events: RunEvent[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      events.push(JSON.parse(line) as RunEvent);
    } catch {
      warnings.push(`line ${index + 1} of ${file} is not valid JSON; it was skipped`);
    }
  });
  const start = events.find((event) => event.type === 'run-start');
  if (!start) throw new UsageError(`${file} has no run-start event; it is not a run's events file`);
  const end = [...events].reverse().find((event) => event.type === 'run-end' || event.type === 'run-resume');
  return { file, events, warnings, start, end: end?.type === 'run-end' ? end : undefined };
}

function truncateTo(file: string, length: number): void {
  const descriptor = openSync(file, 'r+');
  try {
    ftruncateSync(descriptor, length);
  } finally {
    closeSync(descriptor);
  }
}

/** A call that stopped the run on a question no one could answer, with the answer it gets now. */
export interface AnsweredQuestion {
  id: string;
  name: string;
  question: string;
  answer: string;
}

export interface ResumePoint {
  state: ResumeState;
  /** Calls that had started but not finished: each gets a result saying so. */
  interruptedCalls: Array<{ id: string; name: string }>;
  /** Calls that waited for the user: each gets one of the given answers as its result. */
  answeredQuestions: AnsweredQuestion[];
  /** The given answers left over for questions the resumed run asks. */
  remainingAnswers: string[];
  /** Calls that waited for the user's approval, with the decision given now: they run (or are refused) first. */
  decidedCalls: Array<{ id: string; name: string; approved: boolean }>;
}

/** The user's decision about a call that waited for approval. */
export interface ApprovalDecision {
  approved: boolean;
  reason?: string;
}

/**
 * The state to continue from: the history as the model last saw it (compactions applied), the
 * steps and tokens spent, and a result for every call of the last turn that has none in history:
 * the user's answer for a call that waited for one (taken in order from `answers`), the recorded
 * result for a call that finished while a sibling stopped the run, and a notice for a call that
 * was cut short. An earlier resumption closed its calls the same way, so they are rebuilt alike.
 */
export function resumeStateOf(run: RecordedRun, answers: readonly string[] = [], decisions: ReadonlyMap<string, ApprovalDecision> = new Map()): ResumePoint {
  let history: ChatMessage[] = [];
  let step = 0;
  let usage: TokenUsage = zeroUsage();
  let cost: number | undefined;
  let pendingUsage: TokenUsage | undefined;
  // What replies after the last step-end cost, as recorded with each; undefined once one had no known price.
  let pendingCost: number | undefined = 0;
  const files = new Set<string>();
  const finished = new Map<string, string>();
  const questions = new Map<string, string>();
  const awaitingApproval = new Set<string>();
  for (const event of run.events) {
    switch (event.type) {
      case 'message':
        history.push(event.message as ChatMessage);
        break;
      case 'history-compacted':
        history = applyCompaction(history, event.end as number, event.summary as string);
        break;
      case 'history-trimmed':
        history = applyDrop(history, event.end as number);
        break;
      case 'model-response':
        step = Math.max(step, event.step as number);
        if (event.usage) pendingUsage = addUsage(pendingUsage ?? zeroUsage(), event.usage as TokenUsage);
        pendingCost = pendingCost !== undefined && typeof event.cost === 'number' ? pendingCost + event.cost : undefined;
        break;
      case 'step-end':
        usage = { ...(event.usage as TokenUsage) };
        cost = typeof event.cost === 'number' ? event.cost : undefined;
        pendingUsage = undefined;
        pendingCost = 0;
        break;
      case 'tool-call-end':
        finished.set(event.callId as string, String(event.content ?? ''));
        for (const file of (event.files as string[] | undefined) ?? []) files.add(file);
        break;
      case 'human-input-needed':
        questions.set(event.callId as string, String(event.question ?? ''));
        break;
      case 'permission-needed':
        awaitingApproval.add(event.callId as string);
        break;
      case 'run-resume': {
        const given = (event.answers ?? {}) as Record<string, string>;
        const decided = new Set((event.approvalsGiven ?? []) as string[]);
        for (const call of unansweredCalls(history)) {
          // Run once the resumption began: its result follows in the history.
          if (decided.has(call.id)) continue;
          const content = given[call.id] !== undefined ? answerContent(given[call.id]) : finished.get(call.id) ?? interruptedCallResult;
          history.push({ role: 'tool', tool_call_id: call.id, content });
        }
        break;
      }
    }
  }
  // Replies after the last step-end count with the cost each recorded; one without a known price makes it unknown.
  if (pendingUsage) {
    usage = addUsage(usage, pendingUsage);
    cost = cost !== undefined && pendingCost !== undefined ? cost + pendingCost : undefined;
  }
  const remainingAnswers = [...answers];
  const interruptedCalls: Array<{ id: string; name: string }> = [];
  const answeredQuestions: AnsweredQuestion[] = [];
  const decidedCalls: ResumePoint['decidedCalls'] = [];
  const pendingCalls: RawToolCall[] = [];
  for (const call of unansweredCalls(history)) {
    const question = questions.get(call.id);
    let content: string;
    if (awaitingApproval.has(call.id) && !finished.has(call.id)) {
      const decision = decisions.get(call.id);
      if (!decision) {
        throw new UsageError(`run ${String(run.start.runId)} is waiting for approval of the call ${call.id} to '${call.name}': continue it with --approve ${call.id} or --deny ${call.id} [--reason TEXT]`);
      }
      decidedCalls.push({ ...call, approved: decision.approved });
      pendingCalls.push({ id: call.id, name: call.name, arguments: call.arguments });
      continue;
    } else if (question !== undefined) {
      const answer = remainingAnswers.shift();
      if (answer === undefined) {
        throw new UsageError(`run ${String(run.start.runId)} is waiting for an answer to "${question}": give it with --answer TEXT`);
      }
      answeredQuestions.push({ ...call, question, answer });
      content = answerContent(answer);
    } else if (finished.has(call.id)) {
      content = finished.get(call.id)!;
    } else {
      interruptedCalls.push(call);
      content = interruptedCallResult;
    }
    history.push({ role: 'tool', tool_call_id: call.id, content });
  }
  const state = { history, step, usage, ...(cost !== undefined ? { cost } : {}), files: [...files], ...(pendingCalls.length > 0 ? { pendingCalls } : {}) };
  return { state, interruptedCalls, answeredQuestions, remainingAnswers, decidedCalls };
}

/** What the model reads for a user's answer; an empty one says so, as the tool itself does. */
function answerContent(answer: string): string {
  return answer.trim() === '' ? 'The human gave an empty answer.' : answer;
}

function unansweredCalls(history: ChatMessage[]): Array<{ id: string; name: string; arguments: string }> {
  const answered = new Set(history.filter((message) => message.role === 'tool').map((message) => (message as { tool_call_id: string }).tool_call_id));
  const lastAssistant = [...history].reverse().find((message) => message.role === 'assistant');
  const calls = lastAssistant?.role === 'assistant' ? lastAssistant.tool_calls ?? [] : [];
  return calls.filter((call) => !answered.has(call.id)).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
}

/** The calls a run stopped on for approval and has not run since, each with its tool and arguments. */
export function callsAwaitingApproval(run: RecordedRun): Array<{ id: string; tool: string; arguments: unknown; reason?: string; path?: string }> {
  const waiting = new Map<string, { id: string; tool: string; arguments: unknown; reason?: string; path?: string }>();
  for (const event of run.events) {
    if (event.type === 'permission-needed') waiting.set(event.callId, { id: event.callId, tool: event.tool, arguments: event.arguments, reason: event.reason, ...(event.path ? { path: event.path } : {}) });
    if (event.type === 'tool-call-end') waiting.delete(event.callId);
  }
  return [...waiting.values()];
}

/** Approvals for the rest of the run the user gave, as the approval gate keys them, so a resumed run does not ask again. */
export function recordedRunApprovals(run: RecordedRun): string[] {
  return run.events
    .filter((event) => event.type === 'permission-decided' && event.forRun === true && event.decision === 'allow')
    .map((event) => runApprovalKey(String(event.tool), typeof event.rule === 'string' ? event.rule : undefined));
}


export interface RecordedReply {
  /** The part of the run that got it (a flow's step); none for the run's own agent. */
  path?: string;
  step: number;
  content: string | null;
  toolCalls: RawToolCall[];
  reasoning?: string;
  finishReason: string | null;
  usage?: TokenUsage;
  /** The fallback profile that gave it, when not the run's own. */
  profile?: string;
  /** What it cost, as the run priced it. */
  cost?: number;
}

/** The model's replies in the order the run received them. */
export function recordedReplies(run: RecordedRun): RecordedReply[] {
  return run.events
    .filter((event) => event.type === 'model-response')
    .map((event) => ({
      path: event.path,
      step: event.step,
      content: event.content ?? null,
      toolCalls: event.toolCalls ?? [],
      reasoning: event.reasoning,
      finishReason: event.finishReason ?? null,
      usage: event.usage,
      ...(typeof event.profile === 'string' ? { profile: event.profile } : {}),
      ...(typeof event.cost === 'number' ? { cost: event.cost } : {}),
    }));
}

/** Tool results by call id. */
export function recordedToolResults(run: RecordedRun): Map<string, ToolResult> {
  const results = new Map<string, ToolResult>();
  for (const event of run.events) {
    if (event.type !== 'tool-call-end') continue;
    results.set(event.callId, { content: event.content ?? '', isError: event.isError === true, files: event.files });
  }
  return results;
}
