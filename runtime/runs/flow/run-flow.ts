/**
 * The flow engine: runs a flow's steps in order, each of its kind (the kernel's `agent` and
 * `parallel`, or a plugin's), within the flow's budgets, with each event tagged by the step's path.
 * A step that does not succeed stops the flow unless it may fail. Every agent runs the one loop,
 * with its own history, tools and per-step resources; what the engine knows of any step is its
 * kind's contract. A resumed flow uses the recorded results of the steps that finished.
 */
import type { PermissionBlock } from '../../config/types.js';
import type { LoopOutcome, ResumeState } from '../../kernel/agent-loop.js';
import type { RunPlan } from '../../config/run-plan.js';
import type { TokenUsage } from '../../contract/model-types.js';
import type { FlowStepRecord, PreparedRun, RunModel, RunOptions, RunToolbox } from '../run-types.js';
import type { ChatMessage, TraceWriter } from '../../contract/tool.js';
import { AgentRunner } from './agent-runner.js';
import { addUsage, zeroUsage } from '../../contract/token-usage.js';
import { FlowBudget, withinBudgets } from '../../features/flow/flow-budget.js';
import { flowDefaults, type FlowStepDefinition } from '../../config/flow-definition.js';
import type { FlowAgent, FlowPlan } from '../../config/flow-plan.js';
import { branchNames } from '../../features/flow/branch-names.js';
import type { FlowResume } from './flow-resume.js';
import { flowTemplateValue, renderFlowTemplate, type FlowValues } from '../../features/flow/flow-templates.js';
import type { AgentRunRequest, AgentRunResult, StepBudgets, StepResult } from '../../contract/step-kind.js';

export type { FlowStepRecord } from '../run-types.js';

export interface FlowOutcome extends LoopOutcome {
  flowSteps: FlowStepRecord[];
}

export interface FlowRunInput {
  run: PreparedRun;
  plan: RunPlan & { flow: FlowPlan };
  options: RunOptions;
  model: RunModel;
  toolbox: RunToolbox;
  resume?: FlowResume;
}

interface StepScope {
  /** The path of the step's parent, or none at the top. */
  parent?: string;
  item?: unknown;
  /** Limits inherited from enclosing steps. */
  budgets: StepBudgets;
  signal: AbortSignal;
  /** The `permissions:` of the enclosing steps, each deciding beside the agent's. */
  permissionBlocks?: PermissionBlock[];
}

export async function runFlow(input: FlowRunInput): Promise<FlowOutcome> {
  return new FlowRun(input).run();
}

class FlowRun {
  private readonly flow: FlowPlan;
  private readonly budget: FlowBudget;
  private readonly results = new Map<string, StepResult>();
  private readonly records: FlowStepRecord[] = [];
  private readonly files = new Set<string>();
  private readonly runner: AgentRunner;
  private lastHistory: ChatMessage[] = [];
  /** Whether an agent step used a model whose price is unknown, so the flow's cost is unknown too. */
  private costUnknown = false;

  constructor(private readonly input: FlowRunInput) {
    this.flow = input.plan.flow;
    this.budget = new FlowBudget(input.plan.budgets, input.resume, input.options.sharedBudget);
    this.runner = new AgentRunner({ run: input.run, plan: input.plan, options: input.options, model: input.model, toolbox: input.toolbox.tools });
  }

  async run(): Promise<FlowOutcome> {
    const { definition } = this.flow;
    const scope: StepScope = { budgets: {}, signal: this.input.options.signal };
    let last: StepResult | undefined;
    let stopped: StepResult | undefined;
    for (const step of definition.steps) {
      last = await this.runStep(step, step.name, scope);
      this.results.set(step.name, last);
      if (last.status !== 'success' && !step.continueOnFailure) {
        stopped = last;
        break;
      }
    }
    return this.outcome(stopped, last);
  }

  private outcome(stopped: StepResult | undefined, last: StepResult | undefined): FlowOutcome {
    const spent = this.budget.spent;
    const base = { steps: spent.steps, usage: { ...spent.usage }, cost: this.costUnknown ? undefined : spent.cost, files: [...this.files], history: this.lastHistory, flowSteps: this.records };
    if (stopped) {
      const exhausted = this.budget.exhausted();
      if (stopped.status === 'interrupted') return { ...base, status: 'interrupted', answer: 'The run was interrupted.' };
      if (stopped.status === 'budget-exhausted' && exhausted) return { ...base, status: 'budget-exhausted', answer: `The ${exhausted} budget ran out.`, exhaustedBudget: exhausted };
      const failedPath = [...this.records].reverse().find((record) => record.status === stopped.status)?.path;
      return { ...base, status: 'failure', answer: `The flow stopped at step ${failedPath ?? '?'}: ${stopped.reason ?? stopped.answer}` };
    }
    const { answer } = this.flow.definition;
    if (answer !== undefined) {
      try {
        return { ...base, status: 'success', answer: renderFlowTemplate(answer, this.values()) };
      } catch (error) {
        return { ...base, status: 'failure', answer: `The flow's answer could not be written: ${(error as Error).message}` };
      }
    }
    return { ...base, status: 'success', answer: last?.answer ?? '', structured: last?.structured };
  }

  private values(item?: unknown): FlowValues {
    return { parameters: this.flow.parameters, steps: this.results, item };
  }

  /** Runs a step of any kind, or gives its recorded result when a resumed flow had finished it. */
  private async runStep(step: FlowStepDefinition, path: string, scope: StepScope): Promise<StepResult> {
    const recorded = this.input.resume?.finished.get(path);
    if (recorded) {
      this.remember(path, step.kind, recorded, { steps: recorded.steps, usage: recorded.usage, durationMs: 0 });
      // Later steps may read the named steps inside it too.
      for (const child of step.steps ?? []) {
        const childResult = this.input.resume?.finished.get(`${path}/${child.name}`);
        if (childResult) this.results.set(child.name, childResult);
      }
      return recorded;
    }
    const trace = this.input.run.trace.at(path);
    const started = performance.now();
    trace.emit('flow-step-start', { kind: step.kind, name: step.name, ...(step.kind === 'agent' && typeof step.agent === 'string' ? { agent: step.agent } : {}) });
    let result: StepResult;
    try {
      const permissionBlocks = step.permissions ? [...(scope.permissionBlocks ?? []), { source: `step '${step.name}'`, settings: step.permissions }] : scope.permissionBlocks;
      result = await this.runKind(step, path, { ...scope, budgets: withinBudgets(step.budgets, scope.budgets), permissionBlocks }, trace);
    } catch (error) {
      // A question no one can answer now, or the run's own failure: the step stops with the run, to be resumed.
      trace.emit('flow-step-stop', { kind: step.kind, reason: (error as Error).message, durationMs: elapsed(started) });
      throw error;
    }
    const { steps, usage, cost } = this.budget.spentWithin(path);
    const durationMs = elapsed(started);
    trace.emit('flow-step-end', {
      kind: step.kind,
      status: result.status,
      answer: result.answer,
      ...(result.structured !== undefined ? { structured: result.structured } : {}),
      ...(result.answers ? { answers: result.answers } : {}),
      ...(result.reason ? { reason: result.reason } : {}),
      steps,
      usage,
      cost,
      durationMs,
    });
    this.remember(path, step.kind, result, { steps, usage, durationMs });
    return result;
  }

  private remember(path: string, kind: string, result: StepResult, spent: { steps: number; usage: TokenUsage; durationMs: number }): void {
    this.records.push({ path, kind, status: result.status, answer: result.answer, ...(result.reason ? { reason: result.reason } : {}), ...spent });
  }

  private async runKind(step: FlowStepDefinition, path: string, scope: StepScope, trace: TraceWriter): Promise<StepResult> {
    const render = (template: string) => renderFlowTemplate(template, this.values(scope.item));
    if (step.kind === 'agent') {
      let task: string;
      try {
        task = render(step.prompt ?? '');
      } catch (error) {
        return { status: 'failure', answer: '', reason: (error as Error).message };
      }
      return this.runAgent(step.agent, { agent: step.agent, task, path: '', response: step.response, budgets: {} }, path, scope);
    }
    if (step.kind === 'parallel') return this.runParallel(step, path, scope);
    const kind = this.flow.stepKinds.get(step.kind)!;
    return kind.run({
      fields: step.fields,
      name: step.name,
      path,
      render,
      runAgent: (request) => this.runAgent(request.agent, request, `${path}/${request.path}`, scope, true),
      trace,
      runDirectory: this.input.run.runDirectory,
      workspace: this.input.run.workspace,
      signal: scope.signal,
    });
  }

  /** Several steps at once, or one step for each item of a list; answers in order. */
  private async runParallel(step: FlowStepDefinition, path: string, scope: StepScope): Promise<StepResult> {
    let branches: Array<{ step: FlowStepDefinition; path: string; item?: unknown; name?: string }>;
    if (step.step) {
      let items: unknown;
      try {
        items = flowTemplateValue(step.forEach ?? '', this.values(scope.item));
      } catch (error) {
        return { status: 'failure', answer: '', reason: (error as Error).message };
      }
      if (!Array.isArray(items)) {
        return { status: 'failure', answer: '', reason: `for_each of the parallel step '${step.name}' gave ${describeValue(items)}, not a list` };
      }
      const names = branchNames(items);
      branches = items.map((item, index) => ({ step: step.step!, path: `${path}/${names[index]}`, item }));
    } else {
      branches = (step.steps ?? []).map((child) => ({ step: child, path: `${path}/${child.name}`, item: scope.item, name: child.name }));
    }
    // A branch that throws (a question no one can answer) stops its siblings before the error goes on.
    const siblings = new AbortController();
    const signal = AbortSignal.any([scope.signal, siblings.signal]);
    const results: StepResult[] = new Array(branches.length);
    let next = 0;
    const worker = async () => {
      while (next < branches.length) {
        const index = next++;
        const branch = branches[index];
        try {
          results[index] = await this.runStep(branch.step, branch.path, { ...scope, parent: path, item: branch.item, signal });
          if (branch.name) this.results.set(branch.name, results[index]);
        } catch (error) {
          siblings.abort(error);
          throw error;
        }
      }
    };
    const concurrency = Math.max(1, Math.min(step.maxConcurrency ?? flowDefaults.maxConcurrency, branches.length));
    const settled = await Promise.allSettled(Array.from({ length: concurrency }, worker));
    const thrown = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (thrown) throw thrown.reason;
    const answers = results.map((result) => result.answer);
    const failed = results.findIndex((result, index) => result.status !== 'success' && !branches[index].step.continueOnFailure);
    if (failed >= 0) {
      const result = results[failed];
      return { status: result.status, answer: '', answers, reason: `${branches[failed].path}: ${result.reason ?? result.answer}` };
    }
    return { status: 'success', answer: answers.join('\n\n'), answers };
  }

  /**
   * One agent at a path: its loop with its own history, tools, budgets and resources. A resumed
   * flow gives the recorded result of one that finished, and continues one that was running.
   */
  private async runAgent(reference: unknown, request: AgentRunRequest, path: string, scope: StepScope, asSubStep = false): Promise<AgentRunResult> {
    const recorded = this.input.resume?.finished.get(path);
    if (asSubStep && recorded) {
      this.remember(path, 'agent', recorded, { steps: recorded.steps, usage: recorded.usage, durationMs: 0 });
      return { ...recorded, history: [] };
    }
    const agent = this.flow.agents.get(reference);
    if (!agent) throw new Error(`the step at ${path} runs an agent the flow did not declare: ${describeValue(reference)}`);
    if (!asSubStep) return this.loop(agent, request, path, scope);
    // A kind's agent is a sub-step of its own, recorded like a step.
    const trace = this.input.run.trace.at(path);
    const started = performance.now();
    trace.emit('flow-step-start', { kind: 'agent', agent: agent.config.name, ...(request.title ? { title: request.title } : {}) });
    const result = await this.loop(agent, request, path, { ...scope, budgets: withinBudgets(request.budgets ?? {}, scope.budgets) });
    const durationMs = elapsed(started);
    const { steps, usage, cost } = this.budget.spentWithin(path);
    trace.emit('flow-step-end', {
      kind: 'agent',
      status: result.status,
      answer: result.answer,
      ...(result.structured !== undefined ? { structured: result.structured } : {}),
      ...(result.reason ? { reason: result.reason } : {}),
      steps,
      usage,
      cost,
      durationMs,
    });
    this.remember(path, 'agent', result, { steps, usage, durationMs });
    return result;
  }

  private async loop(agent: FlowAgent, request: AgentRunRequest, path: string, scope: StepScope): Promise<AgentRunResult> {
    const resumed = this.input.resume?.stateFor(path);
    const outcome = await this.runner.run({
      agent,
      task: request.task,
      path,
      budgets: this.budget.forStep(withinBudgets(request.budgets ?? {}, scope.budgets), agent.config.maxSteps),
      response: request.response,
      resume: resumed ?? continuedHistory(request),
      signal: scope.signal,
      sharedBudget: this.budget.at(path),
      permissionBlocks: scope.permissionBlocks,
    });
    for (const file of outcome.files) this.files.add(file);
    this.lastHistory = outcome.history;
    if (outcome.cost === undefined) this.costUnknown = true;
    return {
      status: outcome.status,
      answer: outcome.answer,
      ...(outcome.structured !== undefined ? { structured: outcome.structured } : {}),
      ...(outcome.status === 'success' ? {} : { reason: outcome.answer }),
      steps: outcome.steps - (resumed?.step ?? 0),
      usage: subtractUsage(outcome.usage, resumed?.usage ?? zeroUsage()),
      cost: outcome.cost,
      history: outcome.history,
    };
  }
}

/** A conversation a kind asks to continue: the task becomes its next message. */
function continuedHistory(request: AgentRunRequest): ResumeState | undefined {
  if (!request.history || request.history.length === 0) return undefined;
  return { history: [...request.history, { role: 'user', content: request.task }], step: 0, usage: zeroUsage(), files: [] };
}

function subtractUsage(total: TokenUsage, before: TokenUsage): TokenUsage {
  return addUsage(total, { promptTokens: -before.promptTokens, completionTokens: -before.completionTokens, totalTokens: -before.totalTokens });
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}

function describeValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
