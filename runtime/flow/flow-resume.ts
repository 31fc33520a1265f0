/**
 * Where a flow stopped, read back from its events: the steps that finished (their results are
 * used as recorded, never run again), the agents that were running (each continues from its own
 * history), and what the flow had spent.
 */
import type { ResumeState } from '../agent-loop.js';
import type { TokenUsage } from '../model/model-types.js';
import { resumeStateOf, type AnsweredQuestion, type RecordedRun, type RunEvent } from '../recorded-run.js';
import { addUsage, zeroUsage, type FlowSpending } from './flow-budget.js';
import type { StepResult } from './step-kind.js';

export interface FinishedStep extends StepResult {
  steps: number;
  usage: TokenUsage;
  cost: number;
}

export class FlowResume {
  readonly finished = new Map<string, FinishedStep>();
  readonly spent: FlowSpending;
  private readonly paths = new Set<string>();
  private readonly running = new Map<string, ResumeState>();
  /** Questions the flow had stopped on, with the answers given now. */
  readonly answered: AnsweredQuestion[] = [];
  private remainingAnswers: string[];

  constructor(run: RecordedRun, answers: readonly string[] = []) {
    this.remainingAnswers = [...answers];
    const lastStepEnd = new Map<string, RunEvent>();
    let cost = 0;
    for (const event of run.events) {
      if (typeof event.path !== 'string') continue;
      this.paths.add(event.path);
      if (event.type === 'step-end') lastStepEnd.set(event.path, event);
      if (event.type === 'flow-step-end') {
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
    for (const event of lastStepEnd.values()) {
      steps += Number(event.step ?? 0);
      usage = addUsage(usage, event.usage as TokenUsage);
      cost += Number(event.cost ?? 0);
    }
    this.spent = { steps, usage, cost };
    // Each agent that was running takes the answers to the questions it stopped on, in order.
    for (const path of this.paths) {
      if (this.finished.has(path)) continue;
      const events = run.events.filter((event) => event.path === path || event.type === 'run-resume');
      if (!events.some((event) => event.type === 'message')) continue;
      const point = resumeStateOf({ ...run, events }, this.remainingAnswers);
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
