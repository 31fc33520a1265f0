/**
 * Where a flow stopped, read back from its events: the steps that finished (their results are
 * used as recorded, never run again), the agents that were running (each continues from its own
 * history), and what the flow had spent.
 */
import type { ResumeState } from '../../kernel/agent-loop.js';
import type { TokenUsage } from '../../contract/model-types.js';
import { resumeStateOf, type AnsweredQuestion, type ApprovalDecision, type RecordedRun } from '../recorded-run.js';
import { addUsage, zeroUsage } from '../../contract/token-usage.js';
import type { FlowSpending } from '../../features/flow/flow-budget.js';
import type { StepResult } from '../../contract/step-kind.js';

export interface FinishedStep extends StepResult {
  steps: number;
  usage: TokenUsage;
  cost: number;
}

export class FlowResume {
  readonly finished = new Map<string, FinishedStep>();
  readonly spent: FlowSpending;
  /** What the agent at each path had spent up to its last reply. */
  readonly spentByPath = new Map<string, FlowSpending>();
  private readonly paths = new Set<string>();
  private readonly running = new Map<string, ResumeState>();
  /** Questions the flow had stopped on, with the answers given now. */
  readonly answered: AnsweredQuestion[] = [];
  private remainingAnswers: string[];

  constructor(run: RecordedRun, answers: readonly string[] = [], decisions: ReadonlyMap<string, ApprovalDecision> = new Map()) {
    this.remainingAnswers = [...answers];
    // Per path: its last step (a reply may have come without its step's end), and what it spent.
    const spending = new Map<string, { step: number; usage: TokenUsage; pending: TokenUsage; cost: number }>();
    for (const event of run.events) {
      if (typeof event.path !== 'string') continue;
      this.paths.add(event.path);
      const spent = spending.get(event.path) ?? { step: 0, usage: zeroUsage(), pending: zeroUsage(), cost: 0 };
      spending.set(event.path, spent);
      if (event.type === 'model-response') {
        spent.step = Math.max(spent.step, Number(event.step ?? 0));
        if (event.usage) spent.pending = addUsage(spent.pending, event.usage as TokenUsage);
      }
      if (event.type === 'step-end') {
        spent.usage = { ...(event.usage as TokenUsage) };
        spent.pending = zeroUsage();
        spent.cost = Number(event.cost ?? 0);
      }
      // A step that was interrupted runs again when the flow resumes.
      if (event.type === 'flow-step-end' && event.status !== 'interrupted') {
        this.finished.set(event.path, {
          status: event.status,
          answer: String(event.answer ?? ''),
          structured: event.structured,
          answers: event.answers,
          reason: event.reason,
          steps: Number(event.steps ?? 0),
          usage: (event.usage as TokenUsage | undefined) ?? zeroUsage(),
          cost: Number(event.cost ?? 0),
        });
      }
    }
    let steps = 0;
    let usage = zeroUsage();
    let cost = 0;
    for (const [path, spent] of spending) {
      const pathUsage = addUsage(spent.usage, spent.pending);
      if (spent.step > 0) this.spentByPath.set(path, { steps: spent.step, usage: pathUsage, cost: spent.cost });
      steps += spent.step;
      usage = addUsage(usage, pathUsage);
      cost += spent.cost;
    }
    this.spent = { steps, usage, cost };
    // Each agent that was running takes the answers to the questions it stopped on, in order.
    for (const path of this.paths) {
      if (this.finished.has(path)) continue;
      const events = run.events.filter((event) => event.path === path || event.type === 'run-resume');
      if (!events.some((event) => event.type === 'message')) continue;
      const point = resumeStateOf({ ...run, events }, this.remainingAnswers, decisions);
      this.remainingAnswers = point.remainingAnswers;
      this.answered.push(...point.answeredQuestions);
      this.running.set(path, point.state);
    }
  }

  /** The history an agent that was running at `path` continues from, or nothing when it had not started. */
  stateFor(path: string): ResumeState | undefined {
    return this.running.get(path);
  }

  /** Answers given to the resumed run that no stopped question took, for questions still to come. */
  get answersLeft(): string[] {
    return this.remainingAnswers;
  }
}
