/**
 * Budgets and interrupts, driven in-process: the real kernel runs a recipe against a scripted
 * `ChatModel`, so each test says exactly what the model replied and spent.
 */
import { describe, expect, it } from 'vitest';
import { eventsOfType, useInProcessRuns } from './support/in-process-loop.js';
import { callReply, type ScriptedReply } from './support/scripted-chat-model.js';

const run = useInProcessRuns();

/** Replies that never finish: a different echo each step, so nothing looks stuck. */
function endlessEchoes(count: number, extra: Omit<ScriptedReply, 'toolCalls'> = {}): ScriptedReply[] {
  return Array.from({ length: count }, (_, index) => callReply('echo', { text: `step ${index + 1}` }, extra));
}

describe('the step budget', () => {
  it('stops after max_steps steps with the budget named', async () => {
    const { result, model, events } = await run(endlessEchoes(10), { agent: 'max_steps: 3' });
    expect(result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'steps', steps: 3, answer: 'The steps budget ran out.' });
    expect(model.requests).toHaveLength(3);
    expect(result.usage).toEqual({ promptTokens: 30, completionTokens: 15, totalTokens: 45 });
    expect(eventsOfType(events, 'step-end').map((event) => event.kind)).toEqual(['continue', 'continue', 'continue']);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'budget-exhausted', exhaustedBudget: 'steps', steps: 3 });
  });

  it('takes the recipe\'s step budget over the agent\'s, and an override over both', async () => {
    const fromRecipe = await run(endlessEchoes(10), { agent: 'max_steps: 5', recipe: 'budgets: { steps: 2 }' });
    expect(fromRecipe.result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'steps', steps: 2 });
    const overridden = await run(endlessEchoes(10), { agent: 'max_steps: 5', recipe: 'budgets: { steps: 2 }', overrides: { maxSteps: 4 } });
    expect(overridden.result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'steps', steps: 4 });
    expect(overridden.model.requests).toHaveLength(4);
  });

  it('lets the last allowed step finish the run', async () => {
    const { result } = await run([...endlessEchoes(2), callReply('terminate', { status: 'success', message: 'just in time' })], { agent: 'max_steps: 3' });
    expect(result).toMatchObject({ status: 'success', answer: 'just in time', steps: 3 });
    expect(result.exhaustedBudget).toBeUndefined();
  });
});

describe('the token budget', () => {
  it('stops before a request whose prompt would pass what is left', async () => {
    // The provider counts 400 prompt tokens a step; after two steps (1000 spent) a third prompt
    // of about 400 would pass 1200, so it is never sent.
    const { result, model, events } = await run(endlessEchoes(10, { usage: { promptTokens: 400, completionTokens: 100 } }), {
      recipe: 'budgets: { tokens: 1200 }',
    });
    expect(result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'tokens' });
    expect(result.usage).toEqual({ promptTokens: 800, completionTokens: 200, totalTokens: 1000 });
    expect(model.requests).toHaveLength(2);
    expect(eventsOfType(events, 'model-request')).toHaveLength(2);
    expect(eventsOfType(events, 'step-end').map((event) => event.kind)).toEqual(['continue', 'continue', 'budget-exhausted']);
  });

  it('stops at the next step once a reply has spent the budget', async () => {
    const { result, model } = await run(endlessEchoes(10, { usage: { promptTokens: 600, completionTokens: 600 } }), {
      recipe: 'budgets: { tokens: 1000 }',
    });
    expect(result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'tokens', steps: 1 });
    expect(result.usage.totalTokens).toBe(1200);
    expect(model.requests).toHaveLength(1);
  });

  it('counts the prompt itself when the provider reports no usage', async () => {
    const { result, model } = await run(endlessEchoes(10, { usage: null }), { recipe: 'budgets: { tokens: 150 }' });
    expect(result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'tokens' });
    expect(result.usage.totalTokens).toBeGreaterThan(0);
    expect(result.usage.totalTokens).toBeLessThanOrEqual(150);
    expect(model.requests.length).toBeGreaterThanOrEqual(1);
  });
});

describe('the cost budget', () => {
  // $1000 and $2000 per million tokens: a step of 100 prompt and 50 completion tokens costs $0.20.
  const priced = 'price: { input_per_million: 1000, output_per_million: 2000 }';

  it('stops before a request that would pass the cost budget, and reports what was spent', async () => {
    const { result, model, events } = await run(endlessEchoes(10, { usage: { promptTokens: 100, completionTokens: 50 } }), {
      profile: priced,
      recipe: 'budgets: { cost: 0.5 }',
    });
    expect(result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'cost' });
    expect(model.requests).toHaveLength(2);
    expect(result.cost).toBeCloseTo(0.4, 10);
    const stepCosts = eventsOfType(events, 'step-end').map((event) => event.cost);
    expect(stepCosts[0]).toBeCloseTo(0.2, 10);
    expect(stepCosts[1]).toBeCloseTo(0.4, 10);
  });

  it('stops at the next step once a reply has spent it', async () => {
    const { result, model } = await run(endlessEchoes(10, { usage: { promptTokens: 300, completionTokens: 100 } }), {
      profile: priced,
      recipe: 'budgets: { cost: 0.4 }',
    });
    expect(result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'cost', steps: 1 });
    expect(result.cost).toBeCloseTo(0.5, 10);
    expect(model.requests).toHaveLength(1);
  });
});

describe('the time budget', () => {
  it('stops a slow model call when the time runs out', async () => {
    const started = performance.now();
    const { result, model, events } = await run([{ content: 'too late', delayMs: 10_000 }], { recipe: 'budgets: { time_seconds: 0.2 }' });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'time', steps: 1, answer: 'The time budget ran out.' });
    expect(model.requests).toHaveLength(1);
    expect(eventsOfType(events, 'model-response')).toHaveLength(0);
    expect(eventsOfType(events, 'step-end')).toMatchObject([{ step: 1, kind: 'budget-exhausted' }]);
  });

  it('stops a slow tool call when the time runs out', async () => {
    const started = performance.now();
    const { result, events } = await run([callReply('wait', { label: 'long', milliseconds: 10_000 })], { recipe: 'budgets: { time_seconds: 0.2 }' });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'time', steps: 1 });
    expect(eventsOfType(events, 'tool-call-start')).toMatchObject([{ tool: 'wait' }]);
    expect(eventsOfType(events, 'tool-call-end')).toHaveLength(0);
  });

  it('counts the time of the whole run, not of one step', async () => {
    const { result, events } = await run(endlessEchoes(10, { delayMs: 100 }), { recipe: 'budgets: { time_seconds: 0.5 }' });
    expect(result).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'time' });
    const finishedSteps = eventsOfType(events, 'step-end').filter((event) => event.kind === 'continue');
    expect(finishedSteps.length).toBeGreaterThanOrEqual(1);
    for (const step of finishedSteps) expect(step.durationMs).toBeLessThan(500);
    expect(eventsOfType(events, 'step-end').at(-1)).toMatchObject({ kind: 'budget-exhausted' });
  });
});

describe('interrupts', () => {
  it('ends as interrupted when the run\'s signal aborts during a model call', async () => {
    const controller = new AbortController();
    const slowAndStopped = () => {
      setTimeout(() => controller.abort(), 20);
      return { content: 'never', delayMs: 10_000 };
    };
    const { result, events } = await run([callReply('echo', { text: 'first' }), slowAndStopped], { signal: controller.signal });
    expect(result).toMatchObject({ status: 'interrupted', answer: 'The run was interrupted.', steps: 2 });
    expect(result.exhaustedBudget).toBeUndefined();
    expect(eventsOfType(events, 'interrupted')).toMatchObject([{ step: 2 }]);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'interrupted' });
  });

  it('ends as interrupted when the signal aborts during a tool call', async () => {
    const controller = new AbortController();
    const longWaitThenStop = () => {
      setTimeout(() => controller.abort(), 20);
      return callReply('wait', { label: 'long', milliseconds: 10_000 });
    };
    const { result, events } = await run([longWaitThenStop], { signal: controller.signal });
    expect(result).toMatchObject({ status: 'interrupted', steps: 1 });
    expect(eventsOfType(events, 'tool-call-start')).toHaveLength(1);
  });
});
