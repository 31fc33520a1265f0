/**
 * A run as the HTML report shows it, read from its events alone: the header, each step (its model
 * call and tool calls), the images the model was shown, a flow's tree of steps, the plans a plan
 * step made and revised, checks and files. Events come from disk, written by any version of the
 * runtime, so every field is checked (event-fields.ts) and a missing one reads as unknown.
 * `RunViewBuilder` takes events one at a time, so a live view follows a run as it goes.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { parseEventLines, summarize, type RunEventRecord } from '../../runs/run-history.js';
import { connectionAsker, isRecord, numberField, recordField, textField } from '../../services/event-fields.js';
import { addUsage, type TokenUsage } from '../../contract/token-usage.js';
import { flowTree, type FlowTreeNode } from './flow-tree.js';

export type UsageFigures = TokenUsage;

export interface ToolCallView {
  callId: string;
  tool: string;
  /** The arguments as the model gave them, as text (JSON when they parsed). */
  arguments: string;
  result?: string;
  isError: boolean;
  durationMs?: number;
  files: string[];
  truncated: boolean;
  skipped: boolean;
}

export interface ImageView {
  /** Relative to the run folder. */
  file: string;
  mimeType: string;
  source: string;
}

export interface StepView {
  /** 1-based, in the order steps started across the whole run. */
  index: number;
  /** The flow path the step belongs to; undefined for a run of one agent. */
  path?: string;
  /** The agent's own step number. */
  step: number;
  startedAt?: string;
  durationMs?: number;
  /** continue, finished, budget-exhausted, stuck, interrupted; undefined while it runs. */
  ending?: string;
  modelDurationMs?: number;
  usage?: UsageFigures;
  /** US dollars this step cost, when the profile has prices. */
  cost?: number;
  content?: string;
  reasoning?: string;
  finishReason?: string;
  modelAttempts?: number;
  toolCalls: ToolCallView[];
  images: ImageView[];
  notes: string[];
  /** What happened just before the step started: a resume, a new attempt. */
  before: string[];
}

export interface PlanStepView {
  number: number;
  title: string;
  description: string;
  executor: string;
  status: string;
  result?: string;
  reason?: string;
}

export interface PlanView {
  path: string;
  title: string;
  steps: PlanStepView[];
  replans: number;
  answer?: string;
  /** Each change as it happened: created, step-start, step-end, revised, answered. */
  changes: Array<{ change: string; step?: number; time?: string }>;
}

export interface CheckView {
  name: string;
  kind: string;
  passed: boolean;
  skipped: boolean;
  detail: string;
  durationMs?: number;
}

export interface CheckRoundView {
  attempt: number;
  results: CheckView[];
}

export interface RunView {
  runId: string;
  recipe: { name: string; file?: string };
  parameters: Record<string, unknown>;
  agent?: string;
  model?: { model?: string; provider?: string; profile?: string };
  task?: string;
  workspace?: string;
  budgets: { steps?: number; tokens?: number; cost?: number; timeSeconds?: number };
  startedAt?: string;
  /** How the run ended; `running` or `incomplete` when no end was recorded. */
  status: string;
  exitCode?: number;
  answer?: string;
  error?: { code: string; message: string };
  exhaustedBudget?: string;
  durationMs?: number;
  usage: UsageFigures;
  cost?: number;
  attempts?: number;
  files: string[];
  steps: StepView[];
  /** A flow's steps as a tree; empty for a run of one agent. */
  flow: FlowTreeNode[];
  plans: PlanView[];
  checks: CheckRoundView[];
  /** What happened outside any step: resumes, retries, warnings, an interruption. */
  notes: string[];
  warnings: string[];
  /** Whether the run recorded its end (the last part's, for a resumed run). */
  ended: boolean;
  lastEventTime?: string;
}

const zeroUsage = (): UsageFigures => ({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

function usageField(value: unknown): UsageFigures | undefined {
  const usage = recordField(value);
  if (!usage) return undefined;
  const totalTokens = numberField(usage.totalTokens);
  if (totalTokens === undefined) return undefined;
  const cachedPromptTokens = numberField(usage.cachedPromptTokens);
  return {
    promptTokens: numberField(usage.promptTokens) ?? 0,
    completionTokens: numberField(usage.completionTokens) ?? 0,
    totalTokens,
    ...(cachedPromptTokens ? { cachedPromptTokens } : {}),
  };
}

function compactText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2) ?? '';
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

/** Builds a RunView from events given in order; `view()` may be read at any point. */
export class RunViewBuilder {
  private readonly run: RunView;
  /** The step each path (`''` for the top level) is on. */
  private readonly current = new Map<string, StepView>();
  /** The last cumulative cost each path's agent recorded, to take each step's own from it. */
  private readonly pathCost = new Map<string, number>();
  /** The flow's own events, few even in a long run; its tree is drawn from them when the view is read. */
  private readonly flowEvents: RunEventRecord[] = [];
  private readonly plans = new Map<string, PlanView>();
  private readonly changedSteps = new Set<StepView>();
  /** Notes waiting for the next step to start. */
  private readonly pendingNotes: string[] = [];

  constructor(runId: string, warnings: string[] = []) {
    this.run = {
      runId,
      recipe: { name: '' },
      parameters: {},
      budgets: {},
      status: 'incomplete',
      usage: zeroUsage(),
      files: [],
      steps: [],
      flow: [],
      plans: [],
      checks: [],
      notes: [],
      warnings: [...warnings],
      ended: false,
    };
  }

  view(): RunView {
    if (this.flowEvents.length > 0) this.run.flow = flowTree(this.flowEvents);
    return this.run;
  }

  /** Steps added or changed since the last call, for a live view to send on. */
  takeChangedSteps(): StepView[] {
    const changed = [...this.changedSteps].sort((first, second) => first.index - second.index);
    this.changedSteps.clear();
    return changed;
  }

  addAll(events: Iterable<RunEventRecord>): this {
    for (const event of events) this.add(event);
    return this;
  }

  add(event: RunEventRecord): void {
    const time = textField(event.time);
    if (time) {
      this.run.lastEventTime = time;
      // Until the run records its duration, it is the time since it started.
      if (!this.run.ended && this.run.startedAt) this.run.durationMs = Math.max(0, Date.parse(time) - Date.parse(this.run.startedAt)) || this.run.durationMs;
    }
    const path = textField(event.path);
    switch (event.type) {
      case 'run-start':
        return this.start(event);
      case 'run-resume':
        this.current.clear();
        this.run.ended = false;
        this.run.status = 'running';
        return this.noteBeforeNextStep(`Resumed at ${textField(event.time) ?? 'an unknown time'}, after step ${numberField(event.step) ?? 0}.`);
      case 'model-request':
        return this.touch(this.stepFor(path, numberField(event.step), time, true));
      case 'model-response':
        return this.modelResponse(event, path);
      case 'tool-call-start':
        return this.toolStart(event, path);
      case 'tool-call-end':
        return this.toolEnd(event, path);
      case 'tool-call-skipped':
        return this.toolSkipped(event, path);
      case 'image-saved':
        return this.image(event, path);
      case 'step-end':
        return this.stepEnd(event, path);
      case 'model-retry':
        return this.stepNote(event, path, `The model request failed (${textField(event.reason) ?? 'unknown reason'}) and was retried.`);
      case 'profile-switch':
        return this.stepNote(event, path, `The model profile ${textField(event.from) ?? '?'} gave way to ${textField(event.to) ?? '?'}: ${textField(event.reason) ?? 'no reason given'}.`);
      case 'model-rate-wait':
        return this.stepNote(event, path, `The model request waited ${Math.round(numberField(event.waitMs) ?? 0)} ms for the rate limit.`);
      case 'stuck-nudge':
        return this.stepNote(event, path, 'The agent was repeating itself and was told to change course.');
      case 'error-streak-nudge':
        return this.stepNote(event, path, `The last ${numberField(event.failures) ?? '?'} tool calls failed; the agent was told to change course.`);
      case 'history-compacted':
        return this.stepNote(event, path, 'Older history was summarised to fit the context window.');
      case 'history-trimmed':
        return this.stepNote(event, path, `${numberField(event.removedMessages) ?? '?'} older messages were dropped to fit the context window.`);
      case 'human-input-needed':
        return this.stepNote(event, path, `A question with no one to answer it: ${textField(event.question) ?? ''}`);
      case 'human-answer':
        return this.stepNote(event, path, `Asked: ${textField(event.question) ?? ''}\nAnswered${event.source ? ` (${String(event.source)})` : ''}: ${textField(event.answer) ?? ''}`);
      case 'permission-decided':
        return this.stepNote(event, path, permissionDecisionText(event));
      case 'permission-needed':
        return this.stepNote(event, path, `The call ${textField(event.callId) ?? '?'} to ${textField(event.tool) ?? '?'} needs approval (${textField(event.reason) ?? 'a rule asks'}), and no one could give it: the run waits for manus resume --approve or --deny.`);
      case 'run-warning':
        return this.stepNote(event, path, `Warning: ${textField(event.message) ?? ''}`);
      case 'connection-refused':
        return this.stepNote(event, path, `Connection refused to ${textField(event.host) ?? '?'}:${numberField(event.port) ?? '?'} for ${connectionAsker(event)}: ${textField(event.message) ?? ''}`);
      case 'interrupted':
        return this.note('The run was interrupted.');
      case 'retry':
        this.current.clear();
        return this.noteBeforeNextStep(`Attempt ${numberField(event.attempt) ?? '?'} started${Array.isArray(event.failedChecks) ? `, because these checks failed: ${stringList(event.failedChecks).join(', ')}` : ''}.`);
      case 'checks':
        return this.checks(event);
      case 'flow-step-start':
      case 'flow-step-end':
      case 'flow-step-stop':
        this.flowEvents.push(event);
        return;
      case 'plan-update':
        return this.planUpdate(event, path);
      case 'run-end':
        return this.end(event);
      default:
        return;
    }
  }

  private start(event: RunEventRecord): void {
    const recipe = recordField(event.recipe);
    const model = recordField(event.model);
    const budgets = recordField(event.budgets);
    this.run.runId = textField(event.runId) ?? this.run.runId;
    this.run.recipe = { name: textField(recipe?.name) ?? '', file: textField(recipe?.file) };
    this.run.parameters = recordField(recordField(recipe?.overrides)?.parameters) ?? {};
    this.run.agent = textField(event.agent);
    if (model) this.run.model = { model: textField(model.model), provider: textField(model.provider), profile: textField(model.profile) };
    this.run.task = textField(event.task);
    this.run.workspace = textField(event.workspace);
    this.run.budgets = {
      steps: numberField(budgets?.steps),
      tokens: numberField(budgets?.tokens),
      cost: numberField(budgets?.cost),
      timeSeconds: numberField(budgets?.timeSeconds),
    };
    this.run.startedAt = textField(event.time);
    this.run.status = 'running';
  }

  private end(event: RunEventRecord): void {
    const run = this.run;
    run.ended = true;
    run.status = textField(event.status) ?? 'unknown';
    run.exitCode = numberField(event.exitCode);
    run.answer = textField(event.answer);
    const error = recordField(event.error);
    run.error = error ? { code: textField(error.code) ?? '', message: textField(error.message) ?? '' } : undefined;
    run.exhaustedBudget = textField(event.exhaustedBudget);
    run.durationMs = numberField(event.durationMs);
    run.usage = usageField(event.usage) ?? run.usage;
    run.cost = numberField(event.cost);
    run.attempts = numberField(event.attempts);
    run.files = stringList(event.files);
    run.model = { ...run.model, model: textField(event.model) ?? run.model?.model };
    if (Array.isArray(event.checks) && run.checks.length === 0 && event.checks.length > 0) run.checks.push({ attempt: run.attempts ?? 1, results: checkList(event.checks) });
  }

  private note(text: string): void {
    this.run.notes.push(text);
  }

  /** A turn in the run's story (a resume, a new attempt) told where it happened: at the step that follows it. */
  private noteBeforeNextStep(text: string): void {
    this.pendingNotes.push(text);
    this.note(text);
  }

  private stepNote(event: RunEventRecord, path: string | undefined, text: string): void {
    const step = numberField(event.step);
    const current = this.current.get(path ?? '');
    if (current && (step === undefined || current.step === step)) {
      current.notes.push(text);
      this.touch(current);
    } else {
      this.note(text);
    }
  }

  /** The step a path is on; a model request for a step already answered starts it afresh (a resumed step). */
  private stepFor(path: string | undefined, step: number | undefined, time: string | undefined, request = false): StepView {
    const key = path ?? '';
    const current = this.current.get(key);
    if (current && (step === undefined || current.step === step) && !(request && current.modelDurationMs !== undefined)) return current;
    const created: StepView = { index: this.run.steps.length + 1, path, step: step ?? (current ? current.step + 1 : 1), startedAt: time, toolCalls: [], images: [], notes: [], before: [...this.pendingNotes] };
    if (this.pendingNotes.length > 0) {
      this.run.notes = this.run.notes.filter((note) => !this.pendingNotes.includes(note));
      this.pendingNotes.length = 0;
    }
    this.run.steps.push(created);
    this.current.set(key, created);
    return created;
  }

  private touch(step: StepView): void {
    this.changedSteps.add(step);
  }

  private modelResponse(event: RunEventRecord, path: string | undefined): void {
    const step = this.stepFor(path, numberField(event.step), textField(event.time));
    step.content = textField(event.content);
    step.reasoning = textField(event.reasoning);
    step.finishReason = textField(event.finishReason);
    step.modelDurationMs = numberField(event.durationMs) ?? 0;
    step.modelAttempts = numberField(event.attempts);
    step.usage = usageField(event.usage) ?? step.usage;
    if (!this.run.ended && step.usage) this.addRunningUsage(step.usage);
    this.touch(step);
  }

  /** While a run has not ended, its totals are what its steps recorded so far. */
  private addRunningUsage(usage: UsageFigures): void {
    this.run.usage = addUsage(this.run.usage, usage);
  }

  private toolStart(event: RunEventRecord, path: string | undefined): void {
    const step = this.stepFor(path, numberField(event.step), textField(event.time));
    step.toolCalls.push({
      callId: textField(event.callId) ?? String(step.toolCalls.length),
      tool: textField(event.tool) ?? '?',
      arguments: compactText(event.arguments),
      isError: false,
      files: [],
      truncated: false,
      skipped: false,
    });
    this.touch(step);
  }

  private toolEnd(event: RunEventRecord, path: string | undefined): void {
    const step = this.stepFor(path, numberField(event.step), textField(event.time));
    const callId = textField(event.callId);
    let call = step.toolCalls.find((candidate) => candidate.callId === callId && candidate.result === undefined);
    if (!call) {
      call = { callId: callId ?? String(step.toolCalls.length), tool: textField(event.tool) ?? '?', arguments: '', isError: false, files: [], truncated: false, skipped: false };
      step.toolCalls.push(call);
    }
    call.result = textField(event.content) ?? '';
    call.isError = event.isError === true;
    call.durationMs = numberField(event.durationMs);
    call.files = stringList(event.files);
    call.truncated = event.truncated === true;
    this.touch(step);
  }

  private toolSkipped(event: RunEventRecord, path: string | undefined): void {
    const step = this.stepFor(path, numberField(event.step), textField(event.time));
    step.toolCalls.push({ callId: textField(event.callId) ?? '', tool: textField(event.tool) ?? '?', arguments: compactText(event.arguments), isError: false, files: [], truncated: false, skipped: true });
    this.touch(step);
  }

  private image(event: RunEventRecord, path: string | undefined): void {
    const file = textField(event.file);
    if (!file) return;
    const step = this.stepFor(path, numberField(event.step), textField(event.time));
    step.images.push({ file, mimeType: textField(event.mimeType) ?? 'image/jpeg', source: textField(event.source) ?? '' });
    this.touch(step);
  }

  private stepEnd(event: RunEventRecord, path: string | undefined): void {
    const key = path ?? '';
    const step = this.stepFor(path, numberField(event.step), textField(event.time));
    step.durationMs = numberField(event.durationMs);
    step.ending = textField(event.kind);
    const cost = numberField(event.cost);
    if (cost !== undefined) {
      step.cost = Math.max(0, cost - (this.pathCost.get(key) ?? 0));
      this.pathCost.set(key, cost);
      if (!this.run.ended) this.run.cost = (this.run.cost ?? 0) + step.cost;
    }
    this.touch(step);
  }

  private checks(event: RunEventRecord): void {
    const results = Array.isArray(event.results) ? checkList(event.results) : [];
    this.run.checks.push({ attempt: numberField(event.attempt) ?? this.run.checks.length + 1, results });
  }

  private planUpdate(event: RunEventRecord, path: string | undefined): void {
    const plan = recordField(event.plan);
    if (!plan) return;
    const key = path ?? '';
    let view = this.plans.get(key);
    if (!view) {
      view = { path: key, title: '', steps: [], replans: 0, changes: [] };
      this.plans.set(key, view);
      this.run.plans.push(view);
    }
    view.title = textField(plan.title) ?? view.title;
    view.replans = numberField(plan.replans) ?? view.replans;
    view.answer = textField(plan.answer);
    view.steps = (Array.isArray(plan.steps) ? plan.steps : []).filter(isRecord).map((step, index) => ({
      number: numberField(step.number) ?? index + 1,
      title: textField(step.title) ?? '',
      description: textField(step.description) ?? '',
      executor: textField(step.executor) ?? '',
      status: textField(step.status) ?? 'unknown',
      result: textField(step.result),
      reason: textField(step.reason),
    }));
    view.changes.push({ change: textField(event.change) ?? 'changed', step: numberField(event.step), time: textField(event.time) });
  }
}

/** Check results as recorded (a `checks` event, a run-end, a batch item); malformed entries are left out. */
export function checkList(values: unknown[]): CheckView[] {
  return values.filter(isRecord).map((check) => ({
    name: textField(check.name) ?? '?',
    kind: textField(check.kind) ?? '',
    passed: check.passed === true,
    skipped: check.skipped === true,
    detail: textField(check.detail) ?? '',
    durationMs: numberField(check.durationMs),
  }));
}

/**
 * A run's view from its events file: the events file is the only input, so runs recorded before
 * reports existed show too, and a last line cut off mid-write is skipped with a warning.
 */
export async function loadRunView(eventsFile: string): Promise<RunView> {
  const text = await readFile(eventsFile, 'utf8');
  return runViewFromText(basename(dirname(eventsFile)), dirname(eventsFile), text);
}

export function runViewFromText(runId: string, runDirectory: string, text: string): RunView {
  const { events, warnings } = parseEventLines(text, { numbered: true });
  const view = new RunViewBuilder(runId, warnings).addAll(events).view();
  if (!view.ended) {
    // How a run without an end stands (still running, or stopped without saying) is the listing's call.
    const summary = summarize(runId, runDirectory, events, []);
    view.status = summary.status;
    view.durationMs = summary.durationMs;
  }
  return view;
}

/** One permission decision, for the timeline: allowed or denied, by which rule or person. */
function permissionDecisionText(event: RunEventRecord): string {
  const tool = textField(event.tool) ?? '?';
  const rule = textField(event.rule);
  const by = textField(event.by);
  const decided = event.decision === 'allow' ? 'Allowed' : 'Denied';
  const who = by === 'rules'
    ? `by ${rule ? `the rule ${rule}` : 'the rules'}${event.source ? ` of ${textField(event.source)}` : ''}`
    : by === 'run-approval' ? 'by an approval given earlier for the rest of the run'
    : by === 'resume' ? 'by the user when resuming'
    : by === 'on-ask' ? 'because the run refuses every call that needs approval (on_ask: deny)'
    : by === 'unattended' ? 'because no one could approve it in this unattended run'
    : `by the user${event.forRun ? ', for the rest of the run' : ''}`;
  const reason = event.decision === 'allow' ? '' : textField(event.reason) ? `: ${textField(event.reason)}` : '';
  return `${decided} ${tool} ${who}${reason}.`;
}
