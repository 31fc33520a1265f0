/**
 * Runs one turn's tool calls. Independent calls run concurrently; calls to a `sequential` tool (or
 * all calls, when the agent turns parallel calls off) run one after another. Results come back in
 * the order the model made the calls, whatever order they finish in. A failing tool becomes an
 * error result for the model, with its stack trace kept in the events file only; a call the
 * permissions refuse gets its reason as its result. Only interrupts, a question or an approval no one
 * can answer and a broken events file stop the run. Calls listed after one that finishes the run
 * are skipped.
 */
import type { PermissionPolicy } from '../config/types.js';
import { ApprovalNeededError, HumanInputNeededError, PermissionDeniedError } from '../contract/errors.js';
import type { PermissionVerdict } from '../services/permissions/permission-decision.js';
import type { ApprovalGate } from '../services/permissions/approval-gate.js';
import type { RawToolCall } from '../contract/model-types.js';
import type { AnyToolDefinition, ToolContext, ToolResult, TraceWriter } from '../contract/tool.js';
import { parseToolArguments, validateToolArguments } from './tool-arguments.js';
import { truncateMiddle } from '../contract/truncate.js';
import { didYouMean } from '../contract/did-you-mean.js';
import type { RunFaultGuard } from './tool-fault-guard.js';
import { RunTraceError } from '../services/run-trace.js';

export interface PreparedCall {
  id: string;
  name: string;
  /** Arguments as JSON text to keep in history (repaired when the model's text was not valid JSON). */
  argumentsText: string;
  input?: Record<string, unknown>;
  /** Why the call cannot run; becomes its error result. */
  problem?: string;
}

export interface CallOutcome {
  call: PreparedCall;
  result: ToolResult;
  durationMs: number;
  /** Not run: an earlier call in the turn finishes the run. */
  skipped?: boolean;
}

export const skippedCallResult = 'skipped: the run finished with an earlier call in this turn';

export interface ToolRunnerSettings {
  tools: ReadonlyMap<string, AnyToolDefinition>;
  maxObserve: number;
  parallel: boolean;
  permissions: PermissionPolicy;
  /** Answers the calls the permissions ask about. */
  approvals: ApprovalGate;
  trace: TraceWriter;
  step: number;
  contextFor(call: PreparedCall): Promise<ToolContext>;
  /** The tools the run's tools call through `context.callTool` (each tool's `calls`), by name. */
  calledTools?: ReadonlyMap<string, AnyToolDefinition>;
  /** Turns a tool's stray asynchronous error into its call's error result. */
  faults?: RunFaultGuard;
}

/**
 * Turns a raw call into one that can run, or into the problem that becomes its error result. A
 * call from a reply the output limit cut off (`cutOff`) never runs, even when its arguments happen
 * to parse: the model may have meant more than it managed to send.
 */
export function prepareCall(raw: RawToolCall, tools: ReadonlyMap<string, AnyToolDefinition>, cutOff = false): PreparedCall {
  if (cutOff) {
    return {
      id: raw.id,
      name: raw.name,
      argumentsText: safeArgumentsText(raw.arguments),
      problem: `The reply was cut off by the output token limit before it was complete, so no tool call in it was run, ` +
        `this one to '${raw.name}' included. Send the call again with shorter arguments; to write large content, ` +
        `write it to a file in several smaller calls first. Received (possibly incomplete): ${receivedText(raw.arguments)}`,
    };
  }
  const tool = tools.get(raw.name);
  if (!tool) {
    const available = [...tools.keys()].join(', ') || 'none';
    return {
      id: raw.id,
      name: raw.name,
      argumentsText: safeArgumentsText(raw.arguments),
      problem: `There is no tool named '${raw.name}'${didYouMean(raw.name, tools.keys())}. Available tools: ${available}.`,
    };
  }
  const parsed = parseToolArguments(raw.arguments);
  if (!parsed.ok) {
    return {
      id: raw.id,
      name: raw.name,
      argumentsText: '{}',
      problem: `The arguments for '${raw.name}' are not valid JSON (${parsed.error}), so the call was not run. ` +
        `Call the tool again with one complete JSON object matching its schema; if the arguments are long, make them ` +
        `shorter, or write large content to a file in several smaller calls first. Received: ${receivedText(raw.arguments)}`,
    };
  }
  const problems = validateToolArguments(tool, parsed.value);
  const argumentsText = parsed.repaired ? JSON.stringify(parsed.value) : raw.arguments || '{}';
  if (problems.length > 0) {
    return {
      id: raw.id,
      name: raw.name,
      argumentsText,
      problem: `Invalid arguments for '${raw.name}': ${problems.join('; ')}. Parameters schema: ${JSON.stringify(tool.parameters)}`,
    };
  }
  return { id: raw.id, name: raw.name, argumentsText, input: parsed.value };
}

function receivedText(raw: string): string {
  return truncateMiddle(raw, 500).text;
}

function safeArgumentsText(raw: string): string {
  const parsed = parseToolArguments(raw);
  return parsed.ok ? JSON.stringify(parsed.value) : '{}';
}

export async function runToolCalls(calls: PreparedCall[], settings: ToolRunnerSettings): Promise<CallOutcome[]> {
  const chains = new Map<string, Promise<unknown>>();
  // Known before anything runs, so that calls after a finishing call are never started.
  const finishing = calls.findIndex((call) => !call.problem && settings.tools.get(call.name)?.finishesRun === true);
  const pending = calls.map((call, index) => {
    if (finishing !== -1 && index > finishing) return Promise.resolve(skipCall(call, calls[finishing], settings));
    const tool = settings.tools.get(call.name);
    const chainKey = !settings.parallel ? '*' : sequenceOf(tool, call.name);
    if (chainKey === undefined) return runOne(call, settings);
    const previous = chains.get(chainKey) ?? Promise.resolve();
    const next = previous.then(() => runOne(call, settings));
    chains.set(chainKey, next.catch(() => undefined));
    return next;
  });
  const settled = await Promise.allSettled(pending);
  const failure = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<CallOutcome>).value);
}

/** Which chain a call waits in: its tool's, its group's, or none (it runs at once). */
function sequenceOf(tool: AnyToolDefinition | undefined, name: string): string | undefined {
  if (typeof tool?.sequential === 'string') return `group:${tool.sequential}`;
  return tool?.sequential ? `tool:${name}` : undefined;
}

function skipCall(call: PreparedCall, finishing: PreparedCall, settings: ToolRunnerSettings): CallOutcome {
  settings.trace.emit('tool-call-skipped', { step: settings.step, callId: call.id, tool: call.name, after: finishing.id });
  return { call, result: { content: skippedCallResult }, durationMs: 0, skipped: true };
}

async function runOne(call: PreparedCall, settings: ToolRunnerSettings): Promise<CallOutcome> {
  const started = performance.now();
  settings.trace.emit('tool-call-start', { step: settings.step, callId: call.id, tool: call.name, arguments: call.input ?? call.argumentsText });
  let result: ToolResult;
  if (call.problem) {
    result = { content: call.problem, isError: true };
  } else {
    const tool = settings.tools.get(call.name)!;
    const context = withToolCalls(withPermissionCheck(await settings.contextFor(call), tool, call, settings), tool, call, settings);
    result = await execute(tool, call, settings, context);
  }
  // The note goes in the marker, so where the full output was saved survives this second cut.
  const observed = truncateMiddle(settings.trace.redact?.(result.content) ?? result.content, settings.maxObserve, result.savedOutputNotice ?? 'the observation was shortened');
  const outcome: CallOutcome = { call, result: { ...result, content: observed.text }, durationMs: performance.now() - started };
  settings.trace.emit('tool-call-end', {
    step: settings.step,
    callId: call.id,
    tool: call.name,
    isError: result.isError === true,
    content: observed.text,
    truncated: observed.truncated,
    files: result.files,
    images: result.images?.length,
    durationMs: Math.round(outcome.durationMs * 1000) / 1000,
  });
  return outcome;
}

/**
 * Runs a call the permissions allow. `approvalId` is the call a person approves: the model's call
 * itself, or, for a call one tool makes through another, the model's call that led to it.
 */
async function execute(tool: AnyToolDefinition, call: PreparedCall, settings: ToolRunnerSettings, context: ToolContext, approvalId = call.id): Promise<ToolResult> {
  const verdict = await decide(settings.permissions, tool, call, context);
  const denial = await permissionProblem(call, verdict, settings, context, approvalId);
  if (denial) return { content: denial, isError: true };
  const run = async () => tool.execute(call.input ?? {}, context);
  try {
    const running = settings.faults ? settings.faults.runCall({ id: call.id, step: settings.step, tool: call.name }, run) : run();
    // A tool that ignores its signal must not hold the run hostage after an interrupt.
    const value = await Promise.race([running, rejectOnAbort(context.signal)]);
    return typeof value === 'string' ? { content: value } : normaliseResult(value);
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason ?? error;
    if (HumanInputNeededError.isInstance(error)) {
      // Recorded so that a resumed run gives the user's answer to this call as its result.
      settings.trace.emit('human-input-needed', { step: settings.step, callId: call.id, tool: call.name, question: error.question });
      throw error;
    }
    if (PermissionDeniedError.isInstance(error) || ApprovalNeededError.isInstance(error) || RunTraceError.isInstance(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    // The model gets the message; the stack trace is for whoever reads the events file.
    settings.trace.emit('tool-error', { step: settings.step, callId: call.id, tool: call.name, message, stack: error instanceof Error ? error.stack : undefined });
    return { content: `Error: ${message}`, isError: true };
  }
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

function normaliseResult(value: ToolResult): ToolResult {
  if (!value || typeof value !== 'object' || typeof value.content !== 'string') {
    return { content: 'Error: the tool returned no text result', isError: true };
  }
  return value;
}

/** The context with `checkPermission`, deciding calls the tool derives from this one by the run's rules. */
function withPermissionCheck(context: ToolContext, tool: AnyToolDefinition, call: PreparedCall, settings: ToolRunnerSettings): ToolContext {
  return {
    ...context,
    checkPermission: async (input) => {
      const verdict = await decide(settings.permissions, tool, { ...call, input }, context);
      return { allowed: verdict.answer === 'allow', reason: verdict.reason };
    },
  };
}

/** How deep tools may call tools that call tools: a cycle among plugins' `calls` ends here. */
const maximumCallDepth = 4;

/**
 * The context with `callTool`, for a tool that names the tools it calls. A called tool runs as the
 * model's call would: arguments checked, its own settings, the run's rules for it, and an approval
 * asked for under the model's call (`manus resume --approve` that call approves what it leads to).
 */
function withToolCalls(context: ToolContext, caller: AnyToolDefinition, call: PreparedCall, settings: ToolRunnerSettings, depth = 1, approvalId = call.id): ToolContext {
  if (!caller.calls || caller.calls.length === 0) return context;
  let made = 0;
  return {
    ...context,
    callTool: async (name, input) => {
      if (!caller.calls!.includes(name)) throw new Error(`the tool '${caller.name}' cannot call '${name}': it may call only the tools its 'calls' lists (${caller.calls!.join(', ')})`);
      const tool = settings.calledTools?.get(name);
      if (!tool) throw new Error(`the tool '${caller.name}' cannot call '${name}': the run loaded no such tool`);
      if (depth >= maximumCallDepth) throw new Error(`the tool '${caller.name}' cannot call '${name}': tools calling tools nest at most ${maximumCallDepth} deep`);
      made += 1;
      const nested: PreparedCall = { id: `${call.id}:${name}:${made}`, name, argumentsText: JSON.stringify(input), input };
      const started = performance.now();
      const problems = validateToolArguments(tool, input);
      const result = problems.length > 0
        ? { content: `Invalid arguments for '${name}': ${problems.join('; ')}`, isError: true }
        : await execute(tool, nested, settings, withToolCalls(withPermissionCheck(await settings.contextFor(nested), tool, nested, settings), tool, nested, settings, depth + 1, approvalId), approvalId);
      settings.trace.emit('tool-call-nested', {
        step: settings.step,
        callId: nested.id,
        parentCallId: call.id,
        tool: name,
        arguments: input,
        isError: result.isError === true,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      });
      return result;
    },
  };
}

const noRules: PermissionVerdict = { answer: 'allow', reason: 'no rule names this call', askBecomesDenial: false };

/** The rules' answer; a run whose blocks hold no rule at all never loads the rule matcher. */
async function decide(policy: PermissionPolicy, tool: AnyToolDefinition, call: PreparedCall, context: ToolContext): Promise<PermissionVerdict> {
  const ruled = policy.blocks.some(({ settings }) => settings.default !== 'allow' || settings.allow.length + settings.ask.length + settings.deny.length > 0);
  if (!ruled) return noRules;
  const { decidePermission } = await import('../services/permissions/permission-decision.js');
  return decidePermission(policy, { tool, input: call.input ?? {}, workspace: context.workspace });
}

/** Why the permissions refuse the call, or undefined to run it; every decision a rule or a person made is an event. */
async function permissionProblem(call: PreparedCall, verdict: PermissionVerdict, settings: ToolRunnerSettings, context: ToolContext, approvalId: string): Promise<string | undefined> {
  const decided = { step: settings.step, callId: call.id, tool: call.name, rule: verdict.rule, source: verdict.source };
  if (verdict.answer === 'allow') {
    if (verdict.rule !== undefined) settings.trace.emit('permission-decided', { ...decided, decision: 'allow', by: 'rules' });
    return undefined;
  }
  if (verdict.answer === 'deny') {
    settings.trace.emit('permission-decided', { ...decided, decision: 'deny', by: 'rules', reason: verdict.reason });
    return `Permission denied: ${verdict.reason}. Do what the task needs without this call, or say what you need.`;
  }
  const request = { callId: approvalId, tool: call.name, argumentsText: call.argumentsText, rule: verdict.rule, reason: verdict.reason, askBecomesDenial: verdict.askBecomesDenial, human: context.human, signal: context.signal };
  const outcome = await settings.approvals.answer(request).catch((error: unknown) => {
    // Recorded with the call, so that `manus resume --approve` knows what it approves.
    if (ApprovalNeededError.isInstance(error)) settings.trace.emit('permission-needed', { ...decided, callId: approvalId, arguments: call.input ?? call.argumentsText, reason: verdict.reason });
    throw error;
  });
  if (outcome.approved) {
    settings.trace.emit('permission-decided', { ...decided, decision: 'allow', by: outcome.by, ...(outcome.forRun ? { forRun: true } : {}) });
    return undefined;
  }
  settings.trace.emit('permission-decided', { ...decided, decision: 'deny', by: outcome.by, reason: outcome.reason });
  if (outcome.by === 'on-ask' || outcome.by === 'unattended') {
    return `Permission denied: the call to '${call.name}' needs approval (${verdict.reason}), and ${outcome.reason}.`;
  }
  return `Permission denied: the user did not approve the call to '${call.name}'${outcome.reason ? `: ${outcome.reason}` : ''}.`;
}

