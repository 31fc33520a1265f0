/**
 * The agent loop: ask the model, run the tools it chose, feed the results back, until the agent
 * finishes, a budget runs out, it gets stuck or the user stops it. Each step returns a tagged
 * result; nothing here knows any particular agent.
 */
import type { AgentConfig } from './config/types.js';
import type { ContextProviderDefinition } from './context-provider.js';
import { FinalAnswerSchema, structuredAnswerToolName } from './final-answer.js';
import type { ModelClient } from './model/model-client.js';
import type { ModelReply, ToolSpecification, TokenUsage } from './model/model-types.js';
import type { TokenCounter } from './model/token-counter.js';
import type { RunTrace } from './run-trace.js';
import { StuckDetector, turnSignature } from './stuck-detector.js';
import type { AnyToolDefinition, ChatContentPart, ChatMessage, RunResources, ToolContext, ToolImage } from './tool.js';
import { prepareCall, runToolCalls, type CallOutcome } from './tool-runner.js';

export type BudgetName = 'steps' | 'tokens' | 'time';

export type LoopStatus = 'success' | 'failure' | 'budget-exhausted' | 'stuck' | 'interrupted';

export interface LoopOutcome {
  status: LoopStatus;
  answer: string;
  structured?: unknown;
  steps: number;
  usage: TokenUsage;
  exhaustedBudget?: BudgetName;
  /** Workspace-relative paths tools reported producing. */
  files: string[];
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
  model: ModelClient;
  tools: ReadonlyMap<string, AnyToolDefinition>;
  contextProviders: ContextProviderDefinition[];
  budgets: { steps: number; tokens?: number; timeSeconds?: number };
  responseSchema?: FinalAnswerSchema;
  trace: RunTrace;
  tokenCounter: TokenCounter;
  /** Whether the model profile takes images. */
  vision: boolean;
  signal: AbortSignal;
  runId: string;
  workspace: string;
  runDirectory: string;
  resources: RunResources;
  toolContext(call: { id: string; step: number; name: string; signal: AbortSignal }): Promise<ToolContext>;
  toolSettings: Record<string, Record<string, unknown>>;
  onTextDelta?: (text: string) => void;
}

const recentToolWindow = 3;

export async function runAgentLoop(settings: LoopSettings): Promise<LoopOutcome> {
  const state = new LoopState(settings);
  const timeBudget = settings.budgets.timeSeconds ? AbortSignal.timeout(settings.budgets.timeSeconds * 1000) : undefined;
  const signal = timeBudget ? AbortSignal.any([settings.signal, timeBudget]) : settings.signal;
  for (;;) {
    const exhausted = state.exhaustedBudget(timeBudget);
    if (exhausted) return state.outcome('budget-exhausted', `The ${exhausted} budget ran out.`, { exhaustedBudget: exhausted });
    state.step += 1;
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
    settings.trace.emit('step-end', { step: state.step, kind: result.kind, durationMs: round(performance.now() - started), usage: state.usage });
    switch (result.kind) {
      case 'continue':
        continue;
      case 'finished':
        return state.outcome(result.status, result.answer, { structured: result.structured });
      case 'budget-exhausted':
        return state.outcome('budget-exhausted', `The ${result.budget} budget ran out.`, { exhaustedBudget: result.budget });
      case 'stuck':
        return state.outcome('stuck', result.answer);
      case 'interrupted':
        return state.outcome('interrupted', 'The run was interrupted.');
    }
  }
}

class LoopState {
  readonly settings: LoopSettings;
  readonly history: ChatMessage[];
  readonly toolSpecifications: ToolSpecification[];
  readonly stuck: StuckDetector;
  readonly files = new Set<string>();
  readonly recentTools: string[][] = [];
  readonly startedAt = performance.now();
  usage: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  step = 0;
  corrections = 0;
  /** Images from the last step's tools, shown to a vision model once and then dropped. */
  pendingImages: ToolImage[] = [];
  constructor(settings: LoopSettings) {
    this.settings = settings;
    this.history = [
      { role: 'system', content: settings.agent.systemPrompt },
      { role: 'user', content: settings.task },
    ];
    this.toolSpecifications = [...settings.tools.values()].map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
    this.stuck = new StuckDetector(settings.agent.stuckAfter);
  }

  exhaustedBudget(timeBudget: AbortSignal | undefined): BudgetName | undefined {
    const { budgets } = this.settings;
    if (this.step >= budgets.steps) return 'steps';
    if (budgets.tokens !== undefined && this.usage.totalTokens >= budgets.tokens) return 'tokens';
    if (timeBudget?.aborted) return 'time';
    return undefined;
  }

  outcome(status: LoopStatus, answer: string, extra: Partial<LoopOutcome> = {}): LoopOutcome {
    return { status, answer, steps: this.step, usage: { ...this.usage }, files: [...this.files], ...extra };
  }

  addUsage(reply: ModelReply, requestMessages: ChatMessage[]): void {
    const usage = reply.usage ?? this.estimateUsage(reply, requestMessages);
    this.usage.promptTokens += usage.promptTokens;
    this.usage.completionTokens += usage.completionTokens;
    this.usage.totalTokens += usage.totalTokens;
  }

  private estimateUsage(reply: ModelReply, requestMessages: ChatMessage[]): TokenUsage {
    const counter = this.settings.tokenCounter;
    const promptTokens = counter.countMessages(requestMessages);
    const completionTokens = counter.countText(reply.content ?? '') +
      reply.toolCalls.reduce((sum, call) => sum + counter.countText(call.name) + counter.countText(call.arguments), 0);
    return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
  }

  recentToolNames(): Set<string> {
    return new Set(this.recentTools.slice(-recentToolWindow).flat());
  }
}

async function runStep(state: LoopState, signal: AbortSignal): Promise<StepResult> {
  const { settings } = state;
  const requestMessages = [...state.history, ...(await ephemeralMessages(state, signal))];
  if (settings.budgets.tokens !== undefined) {
    const estimate = settings.tokenCounter.countMessages(requestMessages);
    if (state.usage.totalTokens + estimate > settings.budgets.tokens) return { kind: 'budget-exhausted', budget: 'tokens' };
  }

  settings.trace.emit('model-request', { step: state.step, messages: requestMessages.length, tools: state.toolSpecifications.length });
  const reply = await settings.model.complete({
    messages: requestMessages,
    tools: settings.agent.toolChoice === 'none' ? undefined : state.toolSpecifications,
    toolChoice: settings.agent.toolChoice,
    parallelToolCalls: settings.agent.parallelToolCalls,
    signal,
    onTextDelta: settings.onTextDelta,
  });
  state.addUsage(reply, requestMessages);
  settings.trace.emit('model-response', {
    step: state.step,
    content: reply.content,
    toolCalls: reply.toolCalls,
    reasoning: reply.reasoning,
    finishReason: reply.finishReason,
    usage: reply.usage,
    model: reply.model,
    attempts: reply.attempts,
    durationMs: round(reply.durationMs),
  });

  const calls = reply.toolCalls.map((raw) => prepareCall(raw, settings.tools));
  state.recentTools.push(calls.map((call) => call.name));
  if (calls.length === 0) return finishWithText(state, reply.content ?? '');

  state.history.push({
    role: 'assistant',
    content: reply.content || null,
    tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.argumentsText } })),
  });

  const answerCall = calls.find((call) => call.name === structuredAnswerToolName && call.problem);
  if (answerCall && state.corrections >= 1) {
    return { kind: 'finished', status: 'failure', answer: `The final answer did not match the required format after a correction: ${answerCall.problem}` };
  }
  if (answerCall) state.corrections += 1;

  const outcomes = await runToolCalls(calls, {
    tools: settings.tools,
    maxObserve: settings.agent.maxObserve,
    parallel: settings.agent.parallelToolCalls,
    permissions: settings.agent.permissions,
    trace: settings.trace,
    step: state.step,
    contextFor: (call) => settings.toolContext({ id: call.id, step: state.step, name: call.name, signal }),
  });
  for (const outcome of outcomes) {
    state.history.push({ role: 'tool', tool_call_id: outcome.call.id, content: outcome.result.content });
    for (const file of outcome.result.files ?? []) state.files.add(file);
  }
  state.pendingImages = outcomes.flatMap((outcome) => outcome.result.images ?? []);

  const finished = finishingResult(state, outcomes);
  if (finished) return finished;
  return checkRepetition(state, turnSignature(reply.content, calls.map((call) => ({ name: call.name, arguments: call.input ?? call.argumentsText }))));
}

/** A plain-text reply: the answer when the agent finishes on text, otherwise a turn like any other. */
function finishWithText(state: LoopState, text: string): StepResult {
  const { settings } = state;
  if (text.trim() === '') {
    state.history.push({ role: 'user', content: 'Your last reply was empty. Continue with the task, or call terminate if it is done.' });
    return checkRepetition(state, 'text:');
  }
  state.history.push({ role: 'assistant', content: text });
  if (settings.responseSchema) {
    const check = settings.responseSchema.check(text);
    if (check.ok) return { kind: 'finished', status: 'success', answer: JSON.stringify(check.value, null, 2), structured: check.value };
    return requestCorrection(state, check.problems);
  }
  if (settings.agent.finishOnText || settings.agent.toolChoice === 'none') return { kind: 'finished', status: 'success', answer: text };
  return checkRepetition(state, turnSignature(text, []));
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
  state.history.push({ role: 'user', content: schema.correctionRequest(problems) });
  return { kind: 'continue' };
}

function checkRepetition(state: LoopState, signature: string): StepResult {
  const verdict = state.stuck.observe(signature);
  if (verdict === 'ok') return { kind: 'continue' };
  if (verdict === 'stuck') {
    return { kind: 'stuck', answer: 'The agent kept repeating the same action after being warned, so the run was stopped.' };
  }
  state.settings.trace.emit('stuck-nudge', { step: state.step });
  state.history.push({
    role: 'user',
    content: 'You have repeated the same action several times without progress. Change your approach, ' +
      'or call terminate if the task is done or cannot be done.',
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
  if (!settings.vision && state.pendingImages.length > 0) {
    texts.push(`[${state.pendingImages.length} image(s) from the last tool results were not shown: this model profile is not marked vision-capable]`);
  }
  state.pendingImages = [];
  const recentTools = state.recentToolNames();
  for (const provider of settings.contextProviders) {
    const snapshot = await provider.render({
      runId: settings.runId,
      workspace: settings.workspace,
      runDirectory: settings.runDirectory,
      step: state.step,
      recentTools,
      resources: settings.resources,
      signal,
      vision: settings.vision,
      settings: settings.toolSettings[provider.name] ?? {},
    });
    if (snapshot?.text) texts.push(snapshot.text);
    if (snapshot?.images && settings.vision) images.push(...snapshot.images);
  }
  if (settings.agent.nextStepPrompt) texts.push(settings.agent.nextStepPrompt);
  if (texts.length === 0 && images.length === 0) return [];
  if (images.length === 0) return [{ role: 'user', content: texts.join('\n\n') }];
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
