import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../runtime/contract/errors.js';
import type { ToolContext } from '../runtime/contract/tool.js';
import planning from '../plugins/planning/planning.js';
import { createTestToolContext } from './support/tool-context.js';

type PlanningCall = Parameters<typeof planning.execute>[0];

let harness: ReturnType<typeof createTestToolContext>;
let context: ToolContext;

beforeEach(() => {
  harness = createTestToolContext();
  context = harness.context;
});

afterEach(async () => {
  await harness.dispose();
  rmSync(harness.root, { recursive: true, force: true });
});

async function plan(call: PlanningCall, callContext: ToolContext = context): Promise<string> {
  return (await planning.execute(call, callContext)) as string;
}

async function failure(call: PlanningCall): Promise<ToolError> {
  const error = await Promise.resolve(planning.execute(call, context)).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

const tripSteps = ['[browser] Research cities', '[manus] Write itinerary', '[manus] Build HTML handbook'];

describe('planning', () => {
  it('creates a plan, makes it active, and shows progress with status marks', async () => {
    const created = await plan({ command: 'create', plan_id: 'trip', title: 'Japan trip', steps: tripSteps });
    expect(created).toContain('Plan created successfully with id: trip');
    await plan({ command: 'mark_step', step_index: 0, step_status: 'completed', step_notes: 'Tokyo, Kyoto, Osaka' });
    await plan({ command: 'mark_step', step_index: 1, step_status: 'in_progress' });
    await plan({ command: 'mark_step', plan_id: 'trip', step_index: 2, step_status: 'blocked' });
    expect(await plan({ command: 'get' })).toBe(
      [
        'Plan: Japan trip (id: trip)',
        '===========================',
        '',
        'Progress: 1/3 steps completed (33.3%)',
        'Status: 1 completed, 1 in progress, 1 blocked, 0 not started',
        '',
        'Steps:',
        '0. [x] [browser] Research cities',
        '   Notes: Tokyo, Kyoto, Osaka',
        '1. [>] [manus] Write itinerary',
        '2. [!] [manus] Build HTML handbook',
      ].join('\n'),
    );
  });

  it('survives into a second tool context that shares the run folder', async () => {
    await plan({ command: 'create', plan_id: 'trip', title: 'Japan trip', steps: tripSteps });
    await plan({ command: 'mark_step', step_index: 0, step_status: 'completed' });

    const resumed = createTestToolContext({ runDirectory: context.runDirectory });
    try {
      const shown = await plan({ command: 'get' }, resumed.context);
      expect(shown).toContain('Progress: 1/3 steps completed (33.3%)');
      await plan({ command: 'mark_step', step_index: 1, step_status: 'completed' }, resumed.context);
    } finally {
      await resumed.dispose();
      rmSync(resumed.root, { recursive: true, force: true });
    }
    expect(await plan({ command: 'get', plan_id: 'trip' })).toContain('Progress: 2/3 steps completed (66.7%)');
    const stored = JSON.parse(readFileSync(join(context.runDirectory, 'plans.json'), 'utf8'));
    expect(stored.activePlanId).toBe('trip');
    expect(stored.plans.trip.steps[1]).toEqual({ text: '[manus] Write itinerary', status: 'completed', notes: '' });
    expect(readdirSync(context.runDirectory)).toEqual(['plans.json']);
  });

  it('lists plans, switches the active one and deletes', async () => {
    expect(await plan({ command: 'list' })).toContain('No plans available');
    await plan({ command: 'create', plan_id: 'first', title: 'First', steps: ['a'] });
    await plan({ command: 'create', title: 'Second', steps: ['b', 'c'] });
    expect(await plan({ command: 'list' })).toBe(
      'Available plans:\n- first: First - 0/1 steps completed\n- plan-2 (active): Second - 0/2 steps completed',
    );
    expect(await plan({ command: 'set_active', plan_id: 'first' })).toContain('"first" is now the active plan');
    expect(await plan({ command: 'get' })).toContain('Plan: First (id: first)');
    expect(await plan({ command: 'delete', plan_id: 'first' })).toBe('Plan "first" has been deleted.');
    expect((await failure({ command: 'get' })).code).toBe('no_active_plan');
    expect(await plan({ command: 'get', plan_id: 'plan-2' })).toContain('Second');
  });

  it('updates steps, keeping the status of steps that did not change', async () => {
    await plan({ command: 'create', plan_id: 'work', title: 'Work', steps: ['gather', 'analyse', 'report'] });
    await plan({ command: 'mark_step', step_index: 0, step_status: 'completed' });
    await plan({ command: 'mark_step', step_index: 1, step_status: 'completed' });
    const updated = await plan({ command: 'update', title: 'Work v2', steps: ['gather', 'clean', 'report', 'publish'] });
    expect(updated).toContain('Plan: Work v2 (id: work)');
    expect(updated).toContain('0. [x] gather\n1. [ ] clean\n2. [ ] report\n3. [ ] publish');
  });

  it('reports unknown plans, bad indexes and missing parameters', async () => {
    expect((await failure({ command: 'get', plan_id: 'nope' })).message).toContain('there are no plans yet');
    await plan({ command: 'create', plan_id: 'only', title: 'Only', steps: ['one', 'two'] });
    const unknown = await failure({ command: 'set_active', plan_id: 'nope' });
    expect(unknown.code).toBe('plan_not_found');
    expect(unknown.message).toContain('known plans: only');
    const badIndex = await failure({ command: 'mark_step', step_index: 2, step_status: 'completed' });
    expect(badIndex.code).toBe('invalid_step_index');
    expect(badIndex.message).toContain('0 to 1');
    expect((await failure({ command: 'create', plan_id: 'only', title: 'Again', steps: ['x'] })).code).toBe('plan_exists');
    expect((await failure({ command: 'create', title: 'No steps' })).message).toContain('steps is required');
    expect((await failure({ command: 'create', steps: ['x'] })).message).toContain('title is required');
    expect((await failure({ command: 'create', title: 'Empty', steps: [] })).code).toBe('invalid_parameter');
    expect((await failure({ command: 'mark_step', step_status: 'completed' })).message).toContain('step_index');
    expect((await failure({ command: 'mark_step', step_index: 0 })).code).toBe('missing_parameter');
    expect((await failure({ command: 'delete' })).message).toContain('plan_id is required');
    expect((await failure({ command: 'update', plan_id: 'only' })).code).toBe('missing_parameter');
  });

  it('reports a damaged plans file instead of overwriting it', async () => {
    writeFileSync(join(context.runDirectory, 'plans.json'), '{ not json');
    expect((await failure({ command: 'list' })).code).toBe('plans_unreadable');
    expect(readFileSync(join(context.runDirectory, 'plans.json'), 'utf8')).toBe('{ not json');
  });

  it('emits a trace event when a plan changes', async () => {
    await plan({ command: 'create', plan_id: 'trip', title: 'Japan trip', steps: tripSteps });
    await plan({ command: 'list' });
    expect(harness.events.map((event) => event.type)).toEqual(['plan-changed']);
    expect(harness.events[0].data).toMatchObject({ planId: 'trip', activePlanId: 'trip' });
  });
});
