/**
 * The agent loop: ask the model, run the tools it chose, feed the results back, until the agent
 * finishes, a budget runs out, it gets stuck or the user stops it. Each step returns a tagged
 * result; nothing here knows any particular agent.
 */
import type { AgentConfig } from '../config/types.js';
import type { ContextProviderDefinition, ContextProviderInput, ContextProviderStep } from '../contract/context-provider.js';
import { FinalAnswerSchema, structuredAnswerToolName } from './final-answer.js';
import { compactHistory, dropOldestTurns } from './context-compaction.js';
import { errorMessage, ManusError, ProviderError } from '../contract/errors.js';
import { prepareJsonSchemas } from '../contract/json-schema.js';
import type { RunBudgets } from '../config/run-plan.js';
import type { ChatModel, ModelReply, RawToolCall, ToolSpecification, TokenUsage } from '../contract/model-types.js';
import type { TokenCounter } from '../services/model/token-counter.js';
import { costOf, type PriceBook, type TokenPrices } from '../services/model/pricing.js';
import { addUsage, zeroUsage } from '../contract/token-usage.js';
import type { OutsideSpending } from '../services/model/usage-ledger.js';
import { ErrorStreak } from './error-streak.js';
import { finishHint } from './finish-hint.js';
import { PromptBudget } from './prompt-budget.js';
import { StuckDetector, turnSignature } from './stuck-detector.js';
import type { RunFaultGuard } from './tool-fault-guard.js';
import type { ImageRecorder } from './run-images.js';
import type { AnyToolDefinition, ChatContentPart, ChatMessage, ToolContext, ToolImage, TraceWriter } from '../contract/tool.js';
import { prepareCall, runToolCalls, type CallOutcome, type PreparedCall } from './tool-runner.js';
import { createApprovalGate, type ApprovalGate } from '../services/permissions/approval-gate.js';
import { ToolGuides } from './tool-guides.js';
import { toolboxRevision } from './toolbox.js';

export type BudgetName = 'steps' | 'tokens' | 'time' | 'cost';

export type LoopStatus = 'success' | 'failure' | 'budget-exhausted' | 'stuck' | 'interrupted';

export interface LoopOutcome {
  status: LoopStatus;
  answer: string;
  structured?: unknown;
  steps: number;
  usage: TokenUsage;
  /** US dollars; undefined while any reply came from a model whose price is unknown. */
  cost?: number;
  exhaustedBudget?: BudgetName;
  /** Workspace-relative paths tools reported producing. */
  files: string[];
  /** The conversation as it ended, to continue it (a retry after failed checks). */
  history: ChatMessage[];
}

type StepResult =
  | { kind: 'continue' }
  | { kind: 'finished'; status: 'success' | 'failure'; answer: string; structured?: unknown }
  | { kind: 'budget-exhausted'; budget: BudgetName }
  | { kind: 'stuck'; answer: string }
  | { kind: 'interrupted' };

export interface LoopSettings {
  agent: AgentConfig;
  task: string;
  model: ChatModel;
  tools: ReadonlyMap<string, AnyToolDefinition>;
  /** Tools the offered tools call through `context.callTool`, not offered to the model themselves. */
  calledTools?: ReadonlyMap<string, AnyToolDefinition>;
  contextProviders: ContextProviderDefinition[];
  budgets: RunBudgets;
  /** Prices of the profiles replies come from; without it, cost is unknown. */
  prices?: PriceBook;
  /** The model's context window in tokens; compaction is off without it. */
  contextWindow?: number;
  /** Continue a recorded run: its history and what it already spent. */
  resume?: ResumeState;
  responseSchema?: FinalAnswerSchema;
  trace: TraceWriter;
  tokenCounter: TokenCounter;
  /** Whether the model profile takes images. */
  vision: boolean;
  signal: AbortSignal;
  /** What a tool is given for one call. */
  toolContext(call: { id: string; step: number; name: string; signal: AbortSignal }): Promise<ToolContext>;
  /** What a context provider is given to render its state at a step. */
  contextProviderInput(provider: string, step: ContextProviderStep): ContextProviderInput;
  onTextDelta?: (text: string) => void;
  /** Catches tools' stray asynchronous errors during the run. */
  faults?: RunFaultGuard;
  /** What was spent for the loop outside its own requests (an MCP server's sampling, agents called as tools), taken each step. */
  outsideUsage?: { take(): OutsideSpending | undefined };
  /** Limits shared with other loops (a flow's steps): told what this loop spends, checked each step. */
  sharedBudget?: SharedBudget;
  /** Keeps the images the model is shown, for the run's report. */
  recordImages?: ImageRecorder;
  /** Answers the calls the permissions ask about (the run's, shared by its agents); by default a person, else the run stops. */
  approvals?: ApprovalGate;
}

export interface SharedBudget {
  spend(spent: { steps?: number; usage?: TokenUsage; cost?: number }): void;
  /** The shared budget that ran out, if one did. */
  exhausted(): BudgetName | undefined;
}

export interface ResumeState {
  history: ChatMessage[];
  step: number;
  usage: TokenUsage;
  /** What the usage cost, as recorded; undefined when part of it had no known price. */
  cost?: number;
  files: string[];
  /** Calls of the last turn that waited for the user's approval: they run first, with the decision given. */
  pendingCalls?: RawToolCall[];
}

const recentToolWindow = 3;
// 'length' is the OpenAI name; some gateways pass Anthropic's 'max_tokens' through unchanged.
const cutOffFinishReasons = new Set(['length', 'max_tokens']);

export async function runAgentLoop(settings: LoopSettings): Promise<LoopOutcome> {
  const state = new LoopState(settings);
  const timeBudget = settings.budgets.timeSeconds ? AbortSignal.timeout(settings.budgets.timeSeconds * 1000) : undefined;
  const signal = timeBudget ? AbortSignal.any([settings.signal, timeBudget]) : settings.signal;
  // A cost budget is checked before the first request, so its prices must be known by then.
  if (settings.budgets.cost !== undefined) await state.loadDefaultPrices();
  const pending = await runPendingCalls(state, signal);
  if (pending?.kind === 'finished') return await state.outcome(pending.status, pending.answer, { structured: pending.structured });
  for (;;) {
    state.takeOutsideUsage();
    await state.settlePrices();
    const exhausted = state.exhaustedBudget(timeBudget);
    if (exhausted) return await state.outcome('budget-exhausted', `The ${exhausted} budget ran out.`, { exhaustedBudget: exhausted });
    state.step += 1;
    settings.sharedBudget?.spend({ steps: 1 });
    const started = performance.now();
    let result: StepResult;
    // A signal per step: the SDK and tools add abort listeners to what they are given, and a
    // run-long signal would collect them step after step.
    const stepSignal = linkedSignal(signal);
    try {
      result = await runStep(state, stepSignal.signal);
    } catch (error) {
      if (timeBudget?.aborted && !settings.signal.aborted) result = { kind: 'budget-exhausted', budget: 'time' };
      else if (settings.signal.aborted) result = { kind: 'interrupted' };
      else throw error;
    } finally {
      stepSignal.release();
    }
    settings.trace.emit('step-end', {
      step: state.step,
      kind: result.kind,
      durationMs: round(performance.now() - started),
      usage: state.usage,
      ...(state.knownCost !== undefined ? { cost: state.knownCost } : {}),
    });
    switch (result.kind) {
      case 'continue':
        continue;
      case 'finished':
        return await state.outcome(result.status, result.answer, { structured: result.structured });
      case 'budget-exhausted':
        return await state.outcome('budget-exhausted', `The ${result.budget} budget ran out.`, { exhaustedBudget: result.budget });
      case 'stuck':
        return await state.outcome('stuck', result.answer);
      case 'interrupted':
        settings.trace.emit('interrupted', { step: state.step });
        return await state.outcome('interrupted', 'The run was interrupted.');
    }
  }
}

class LoopState {
  readonly settings: LoopSettings;
  history: ChatMessage[];
  private specifications: ToolSpecification[] = [];
  private specificationsRevision = -1;
  readonly stuck: StuckDetector;
  readonly errors: ErrorStreak;
  readonly files = new Set<string>();
  readonly recentTools: string[][] = [];
  readonly promptBudget: PromptBudget;
  readonly guides: ToolGuides;
  readonly approvals: ApprovalGate;
  usage: TokenUsage = zeroUsage();
  /** Dollars spent on usage already priced. */
  cost = 0;
  /** Usage not priced yet, by the profile that answered ('' for the run's own). */
  private readonly unpriced = new Map<string, TokenUsage>();
  /** Whether some usage came from a model whose price is unknown. */
  private unknownPrice = false;
  /** The run's own profile's prices, once they have been looked up. */
  defaultPrices: TokenPrices | undefined;
  step = 0;
  corrections = 0;
  private lastEphemeral: ChatMessage | undefined;
  /** Images from the last step's tools, shown to a vision model once and then dropped. */
  pendingImages: ToolImage[] = [];
  /** How the agent can end the run ("call terminate"), for the nudges; undefined when it cannot. */
  readonly finishHint: string | undefined;
  constructor(settings: LoopSettings) {
    this.settings = settings;
    this.approvals = settings.approvals ?? createApprovalGate({ unanswered: 'stop' });
    this.history = [...(settings.resume?.history ?? [])];
    if (settings.resume) {
      this.step = settings.resume.step;
      this.usage = { ...settings.resume.usage };
      // Spent before, and counted then in any budget shared with other loops: never priced or spent again.
      this.cost = settings.resume.cost ?? 0;
      this.unknownPrice = settings.resume.cost === undefined && settings.resume.usage.totalTokens > 0;
      for (const file of settings.resume.files) this.files.add(file);
    }
    // A run stopped before its first messages were written (killed while it started) begins its
    // conversation now, with what of it is missing.
    if (this.history.length === 0) this.append({ role: 'system', content: settings.agent.systemPrompt });
    if (this.history.length === 1) this.append({ role: 'user', content: settings.task });
    // With tool_choice none the model is offered no tools, so only a text answer can end the run.
    const offeredTools = settings.agent.toolChoice === 'none' ? [] : settings.tools.values();
    this.finishHint = finishHint(offeredTools, finishesOnText(settings));
    this.promptBudget = new PromptBudget(settings.budgets);
    this.guides = new ToolGuides(settings.tools);
    this.guides.recall(this.history);
    this.stuck = new StuckDetector(settings.agent.stuckAfter);
    this.errors = new ErrorStreak(settings.agent.errorStreak);
  }

  /** What the model is told about the tools; rebuilt only when the toolbox changed since the last step. */
  get toolSpecifications(): ToolSpecification[] {
    const revision = toolboxRevision(this.settings.tools);
    if (revision !== this.specificationsRevision) {
      this.specificationsRevision = revision;
      this.specifications = [...this.settings.tools.values()].map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      }));
    }
    return this.specifications;
  }

  takeOutsideUsage(): void {
    const spent = this.settings.outsideUsage?.take();
    if (!spent) return;
    this.usage = addUsage(this.usage, spent.usage);
    if (spent.unpriced.totalTokens > 0) this.unpriced.set('', addUsage(this.unpriced.get('') ?? zeroUsage(), spent.unpriced));
    this.cost += spent.cost;
    if (spent.unknownCost) this.unknownPrice = true;
    this.settings.sharedBudget?.spend({ usage: spent.usage, cost: spent.cost });
  }

  /** Adds a message to history and to the events file, from which a resumed run rebuilds it. */
  append(message: ChatMessage): void {
    this.history.push(message);
    this.settings.trace.emit('message', { step: this.step, message });
  }

  /** The cost so far, or undefined when part of it is unknown. */
  get knownCost(): number | undefined {
    return this.unknownPrice || !this.settings.prices ? undefined : this.cost;
  }

  async loadDefaultPrices(): Promise<TokenPrices | undefined> {
    this.defaultPrices ??= await this.settings.prices?.pricesFor();
    return this.defaultPrices;
  }

  /**
   * Prices what was spent since the last call. Prices load only here, after a reply has come, so
   * looking them up never delays a request; a loaded price table answers at once.
   */
  async settlePrices(): Promise<void> {
    const { prices, sharedBudget } = this.settings;
    if (!prices || this.unpriced.size === 0) return;
    const pending = [...this.unpriced];
    this.unpriced.clear();
    let added = 0;
    for (const [profile, usage] of pending) {
      const profilePrices = profile === '' ? await this.loadDefaultPrices() : await prices.pricesFor(profile);
      if (profilePrices) added += costOf(usage, profilePrices);
      else this.unknownPrice = true;
    }
    this.cost += added;
    sharedBudget?.spend({ cost: added });
  }

  exhaustedBudget(timeBudget: AbortSignal | undefined): BudgetName | undefined {
    const { budgets } = this.settings;
    if (this.step >= budgets.steps) return 'steps';
    if (budgets.tokens !== undefined && this.usage.totalTokens >= budgets.tokens) return 'tokens';
    if (budgets.cost !== undefined && this.cost >= budgets.cost) return 'cost';
    if (timeBudget?.aborted) return 'time';
    return this.settings.sharedBudget?.exhausted();
  }

  async outcome(status: LoopStatus, answer: string, extra: Partial<LoopOutcome> = {}): Promise<LoopOutcome> {
    this.takeOutsideUsage();
    await this.settlePrices();
    return { status, answer, steps: this.step, usage: { ...this.usage }, cost: this.knownCost, files: [...this.files], history: this.history, ...extra };
  }

  addReplyUsage(reply: ModelReply, requestMessages: ChatMessage[]): void {
    const usage = reply.usage ?? this.estimateUsage(reply, requestMessages);
    if (reply.cost === undefined) {
      this.addTokens(usage, reply.profile);
      return;
    }
    this.usage = addUsage(this.usage, usage);
    this.cost += reply.cost;
    this.settings.sharedBudget?.spend({ usage, cost: reply.cost });
  }

  /** What one reply cost, for its event; undefined when its model's price is unknown. */
  async costOfReply(reply: ModelReply): Promise<number | undefined> {
    if (reply.cost !== undefined || !reply.usage || !this.settings.prices) return reply.cost;
    const prices = reply.profile === undefined ? await this.loadDefaultPrices() : await this.settings.prices.pricesFor(reply.profile);
    return prices ? costOf(reply.usage, prices) : undefined;
  }

  /** Counts tokens at once; their cost is added when they are priced, at the next `settlePrices`. */
  addTokens(usage: TokenUsage, profile = ''): void {
    this.usage = addUsage(this.usage, usage);
    this.unpriced.set(profile, addUsage(this.unpriced.get(profile) ?? zeroUsage(), usage));
    this.settings.sharedBudget?.spend({ usage });
  }

  private estimateUsage(reply: ModelReply, requestMessages: ChatMessage[]): TokenUsage {
    const counter = this.settings.tokenCounter;
    const promptTokens = counter.countMessages(requestMessages);
    const completionTokens = counter.countText(reply.content ?? '') +
      reply.toolCalls.reduce((sum, call) => sum + counter.countText(call.name) + counter.countText(call.arguments), 0);
    return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
  }

  /**
   * The step's message of text the history does not keep: the same object while its text is
   * unchanged (a next-step prompt alone), so that its tokens are counted and its secrets hidden once.
   */
  ephemeralText(text: string): ChatMessage {
    if (this.lastEphemeral?.content !== text) this.lastEphemeral = { role: 'user', content: text };
    return this.lastEphemeral;
  }

  recentToolNames(): Set<string> {
    return new Set(this.recentTools.slice(-recentToolWindow).flat());
  }
}

async function runStep(state: LoopState, signal: AbortSignal): Promise<StepResult> {
  const { settings } = state;
  const ephemeral = await ephemeralMessages(state, signal);
  let requestMessages = [...state.history, ...ephemeral];
  const count = () => settings.tokenCounter.countMessages(requestMessages);
  if (settings.contextWindow !== undefined) {
    const estimate = count();
    if (estimate > settings.contextWindow * settings.agent.compaction.threshold && (await compact(state, 'near-context-window', estimate, signal))) {
      requestMessages = [...state.history, ...ephemeral];
    }
  }
  if (state.promptBudget.limited) {
    const exceeded = state.promptBudget.exceededBy(count(), { tokens: state.usage.totalTokens, cost: state.cost }, state.defaultPrices);
    if (exceeded) return { kind: 'budget-exhausted', budget: exceeded };
  }

  let reply: ModelReply;
  try {
    reply = await requestReply(state, requestMessages, signal);
  } catch (error) {
    // A provider that says the conversation is too long gets one compaction and one more try.
    const tooLong = ProviderError.isInstance(error) && error.kind === 'context_too_long';
    if (!tooLong) throw error;
    // Compaction comes first; what it cannot cure goes once more to a chain that may have a larger window.
    if (!(await compact(state, 'context-too-long', undefined, signal)) && !settings.model.hasFallbacks) throw error;
    requestMessages = [...state.history, ...ephemeral];
    reply = await requestReply(state, requestMessages, signal, { compacted: true });
  }
  state.addReplyUsage(reply, requestMessages);
  await state.settlePrices();
  const replyCost = await state.costOfReply(reply);
  if (state.promptBudget.limited) state.promptBudget.calibrate(count(), reply.usage?.promptTokens);
  // Arguments and answers are checked with ajv, which loads only now, while nothing else waits.
  await prepareJsonSchemas();
  settings.trace.emit('model-response', {
    step: state.step,
    content: reply.content,
    toolCalls: reply.toolCalls,
    reasoning: reply.reasoning,
    finishReason: reply.finishReason,
    usage: reply.usage,
    model: reply.model,
    ...(reply.profile ? { profile: reply.profile } : {}),
    ...(replyCost !== undefined ? { cost: replyCost } : {}),
    attempts: reply.attempts,
    durationMs: round(reply.durationMs),
  });

  // A reply the output limit cut off may end mid-call: none of its calls run, each gets an error result.
  const cutOff = cutOffFinishReasons.has(reply.finishReason ?? '');
  const calls = reply.toolCalls.map((raw) => prepareCall(raw, settings.tools, cutOff));
  state.recentTools.push(calls.map((call) => call.name));
  if (calls.length === 0) return cutOff ? continueCutOffText(state, reply.content ?? '') : finishWithText(state, reply.content ?? '');

  state.append({
    role: 'assistant',
    content: reply.content || null,
    tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.argumentsText } })),
  });

  const answerCall = calls.find((call) => call.name === structuredAnswerToolName && call.problem);
  if (answerCall && state.corrections >= 1) {
    return { kind: 'finished', status: 'failure', answer: `The final answer did not match the required format after a correction: ${answerCall.problem}` };
  }
  if (answerCall) state.corrections += 1;

  const outcomes = await runCalls(state, calls, signal);
  const finished = finishingResult(state, outcomes);
  if (finished) return finished;
  const failing = checkErrorStreak(state, outcomes);
  if (failing) return failing;
  return checkRepetition(state, turnSignature(reply.content, calls.map((call) => ({ name: call.name, arguments: call.input ?? call.argumentsText }))));
}

/** Runs a turn's calls and adds their results to the history. */
async function runCalls(state: LoopState, calls: PreparedCall[], signal: AbortSignal): Promise<CallOutcome[]> {
  const { settings } = state;
  const outcomes = await runToolCalls(calls, {
    tools: settings.tools,
    maxObserve: settings.agent.maxObserve,
    parallel: settings.agent.parallelToolCalls,
    permissions: settings.agent.permissionPolicy ?? { blocks: [{ source: `agent '${settings.agent.name}'`, settings: settings.agent.permissions }] },
    approvals: state.approvals,
    trace: settings.trace,
    step: state.step,
    contextFor: (call) => settings.toolContext({ id: call.id, step: state.step, name: call.name, signal }),
    calledTools: settings.calledTools,
    faults: settings.faults,
  });
  for (const outcome of outcomes) {
    state.append({ role: 'tool', tool_call_id: outcome.call.id, content: state.guides.withGuide(outcome.call.name, outcome.result.content) });
    for (const file of outcome.result.files ?? []) state.files.add(file);
  }
  state.pendingImages = outcomes.flatMap((outcome) => outcome.result.images ?? []);
  return outcomes;
}

/** Calls a resumed run stopped on for the user's approval: run (or refused) now, before the next request. */
async function runPendingCalls(state: LoopState, signal: AbortSignal): Promise<StepResult | undefined> {
  const pending = state.settings.resume?.pendingCalls ?? [];
  if (pending.length === 0) return undefined;
  return finishingResult(state, await runCalls(state, pending.map((call) => prepareCall(call, state.settings.tools)), signal));
}

async function requestReply(state: LoopState, requestMessages: ChatMessage[], signal: AbortSignal, retry: { compacted?: boolean } = {}): Promise<ModelReply> {
  const { settings } = state;
  settings.trace.emit('model-request', { step: state.step, messages: requestMessages.length, tools: state.toolSpecifications.length });
  return settings.model.complete({
    messages: requestMessages,
    // History is append-only, so its messages open the next request too: the prefix a provider caches.
    stableMessages: state.history.length,
    ...retry,
    tools: settings.agent.toolChoice === 'none' ? undefined : state.toolSpecifications,
    toolChoice: settings.agent.toolChoice,
    parallelToolCalls: settings.agent.parallelToolCalls,
    signal,
    onTextDelta: settings.onTextDelta,
  });
}

/**
 * Folds older turns into a summary; false when there was nothing to fold. A summary that cannot be
 * had is recorded and the oldest turns are dropped instead, so the request still fits.
 */
async function compact(state: LoopState, reason: string, tokensBefore: number | undefined, signal: AbortSignal): Promise<boolean> {
  const { settings } = state;
  let result: Awaited<ReturnType<typeof compactHistory>>;
  try {
    result = await compactHistory(state.history, settings.model, settings.agent.compaction, signal);
  } catch (error) {
    if (signal.aborted) throw error;
    settings.trace.emit('compaction-failed', { step: state.step, reason, error: { code: ManusError.isInstance(error) ? error.code : undefined, message: errorMessage(error) } });
    return dropOldest(state, reason, tokensBefore);
  }
  if (!result) return false;
  if (result.usage) state.addTokens(result.usage);
  state.history = result.history;
  state.guides.recall(state.history);
  settings.trace.emit('history-compacted', {
    step: state.step,
    reason,
    end: result.end,
    summary: result.summary,
    removedMessages: result.end - 2,
    tokensBefore,
    tokensAfter: settings.tokenCounter.countMessages(state.history),
  });
  return true;
}

function dropOldest(state: LoopState, reason: string, tokensBefore: number | undefined): boolean {
  const { settings } = state;
  const window = settings.contextWindow;
  const fits = (history: ChatMessage[]) => window === undefined || settings.tokenCounter.countMessages(history) <= window * settings.agent.compaction.threshold;
  const dropped = dropOldestTurns(state.history, settings.agent.compaction.keepRecentMessages, fits);
  if (!dropped) return false;
  state.history = dropped.history;
  state.guides.recall(state.history);
  settings.trace.emit('history-trimmed', {
    step: state.step,
    reason,
    end: dropped.end,
    removedMessages: dropped.end - 2,
    tokensBefore,
    tokensAfter: settings.tokenCounter.countMessages(state.history),
  });
  return true;
}

/**
 * Text cut off by the output limit is never a final answer, however the agent finishes: the model is
 * asked for a shorter complete reply, and a model that keeps running into the limit ends as stuck.
 */
function continueCutOffText(state: LoopState, text: string): StepResult {
  if (text.trim() !== '') state.append({ role: 'assistant', content: text });
  state.append({
    role: 'user',
    content: 'Your last reply was cut off by the output token limit, so it was not taken as your answer. ' +
      'Reply again with a shorter complete answer, or write long content to a file in several smaller steps first.',
  });
  return checkRepetition(state, 'cut-off:');
}

/** A plain-text reply: the answer when the agent finishes on text, otherwise a turn like any other. */
function finishWithText(state: LoopState, text: string): StepResult {
  const { settings } = state;
  if (text.trim() === '') {
    state.append({ role: 'user', content: `Your last reply was empty. Continue with the task${orFinish(state, 'if it is done')}.` });
    return checkRepetition(state, 'text:');
  }
  state.append({ role: 'assistant', content: text });
  if (settings.responseSchema) {
    const check = settings.responseSchema.check(text);
    if (check.ok) return { kind: 'finished', status: 'success', answer: JSON.stringify(check.value, null, 2), structured: check.value };
    return requestCorrection(state, check.problems);
  }
  if (settings.agent.finishOnText || settings.agent.toolChoice === 'none') return { kind: 'finished', status: 'success', answer: text };
  return checkRepetition(state, turnSignature(text, []));
}

/** Whether a plain-text reply can be the answer: as JSON for a required format, or as the agent allows. */
function finishesOnText(settings: LoopSettings): boolean {
  return settings.responseSchema !== undefined || settings.agent.finishOnText || settings.agent.toolChoice === 'none';
}

/** ", or call terminate if <when>" for a nudge, or nothing when the agent has no way to finish. */
function orFinish(state: LoopState, when: string): string {
  return state.finishHint ? `, or ${state.finishHint} ${when}` : '';
}

function finishingResult(state: LoopState, outcomes: CallOutcome[]): StepResult | undefined {
  const finishing = outcomes.find((outcome) => outcome.result.finish && !outcome.result.isError);
  const finish = finishing?.result.finish;
  if (!finish) return undefined;
  const schema = state.settings.responseSchema;
  if (!schema || finish.status === 'failure') return { kind: 'finished', ...finish };
  const check = schema.check(finish.structured ?? finish.answer);
  if (check.ok) return { kind: 'finished', status: 'success', answer: JSON.stringify(check.value, null, 2), structured: check.value };
  return requestCorrection(state, check.problems);
}

function requestCorrection(state: LoopState, problems: string[]): StepResult {
  const schema = state.settings.responseSchema!;
  if (state.corrections >= 1) {
    return { kind: 'finished', status: 'failure', answer: `The final answer did not match the required format after a correction: ${problems.join('; ')}` };
  }
  state.corrections += 1;
  state.append({ role: 'user', content: schema.correctionRequest(problems) });
  return { kind: 'continue' };
}

function checkRepetition(state: LoopState, signature: string): StepResult {
  const verdict = state.stuck.observe(signature);
  if (verdict === 'ok') return { kind: 'continue' };
  if (verdict === 'stuck') {
    return { kind: 'stuck', answer: 'The agent kept repeating the same action after being warned, so the run was stopped.' };
  }
  state.settings.trace.emit('stuck-nudge', { step: state.step });
  state.append({
    role: 'user',
    content: `You have repeated the same action several times without progress. Change your approach${orFinish(state, 'if the task is done or cannot be done')}.`,
  });
  return { kind: 'continue' };
}

/** Failed calls in a row, whichever they were: a nudge, then a stop. */
function checkErrorStreak(state: LoopState, outcomes: CallOutcome[]): StepResult | undefined {
  const verdict = state.errors.observe(outcomes.filter((outcome) => !outcome.skipped).map((outcome) => outcome.result.isError === true));
  if (verdict === 'ok') return undefined;
  const failures = state.errors.failures;
  if (verdict === 'stuck') {
    return { kind: 'stuck', answer: `The last ${failures} tool calls all failed, after a warning at ${state.settings.agent.errorStreak}, so the run was stopped.` };
  }
  state.settings.trace.emit('error-streak-nudge', { step: state.step, failures });
  state.append({
    role: 'user',
    content: `Your last ${failures} tool calls all failed. Stop and work out why before trying again: read the errors, ` +
      `check your assumptions (paths, names, installed programs), try a different approach${orFinish(state, 'if the task cannot be done')}.`,
  });
  return { kind: 'continue' };
}

/**
 * What the model sees this step but history does not keep: the next-step prompt, context
 * providers' current state and last step's images (for vision models).
 */
async function ephemeralMessages(state: LoopState, signal: AbortSignal): Promise<ChatMessage[]> {
  const { settings } = state;
  const texts: string[] = [];
  const images: ToolImage[] = settings.vision ? [...state.pendingImages] : [];
  if (images.length > 0) settings.recordImages?.(state.step, 'tool', images);
  if (!settings.vision && state.pendingImages.length > 0) {
    texts.push(`[${state.pendingImages.length} image(s) from the last tool results were not shown: this model profile is not marked vision-capable]`);
  }
  state.pendingImages = [];
  const recentTools = state.recentToolNames();
  for (const provider of settings.contextProviders) {
    const snapshot = await provider.render(settings.contextProviderInput(provider.name, { step: state.step, recentTools, signal }));
    if (snapshot?.text) texts.push(snapshot.text);
    if (snapshot?.images && settings.vision) {
      images.push(...snapshot.images);
      settings.recordImages?.(state.step, provider.name, snapshot.images);
    }
  }
  if (settings.agent.nextStepPrompt) texts.push(settings.agent.nextStepPrompt);
  if (texts.length === 0 && images.length === 0) return [];
  if (images.length === 0) return [state.ephemeralText(texts.join('\n\n'))];
  const parts: ChatContentPart[] = [
    ...texts.map((text) => ({ type: 'text' as const, text })),
    ...images.map((image) => ({ type: 'image_url' as const, image_url: { url: `data:${image.mimeType};base64,${image.data}` } })),
  ];
  return [{ role: 'user', content: parts }];
}

function linkedSignal(parent: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  if (parent.aborted) controller.abort(parent.reason);
  const forward = () => controller.abort(parent.reason);
  parent.addEventListener('abort', forward, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', forward) };
}

function round(milliseconds: number): number {
  return Math.round(milliseconds * 1000) / 1000;
}
