/**
 * Plans as a model keeps them while it works, compatible with OpenManus's planning tool. Plans
 * live in `<runDirectory>/plans.json`, replaced atomically on every change, so they survive the
 * process and a resumed run finds them where it left them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineTool, ToolError } from 'manus-runtime';
import type { SchemaInput, ToolContext } from 'manus-runtime';
import { writeFileAtomically } from './write-file-atomically.js';

type StepStatus = 'not_started' | 'in_progress' | 'completed' | 'blocked';


interface PlanStep {
  text: string;
  status: StepStatus;
  notes: string;
}

interface Plan {
  id: string;
  title: string;
  steps: PlanStep[];
}

/** The shape of plans.json. */
interface PlanStore {
  version: 1;
  activePlanId: string | null;
  plans: Record<string, Plan>;
}

const storeFileName = 'plans.json';
const stepStatuses: StepStatus[] = ['not_started', 'in_progress', 'completed', 'blocked'];
const statusMarks: Record<StepStatus, string> = {
  not_started: '[ ]',
  in_progress: '[>]',
  completed: '[x]',
  blocked: '[!]',
};

const parameters = {
  type: 'object',
  properties: {
    command: {
      type: 'string',
      enum: ['create', 'update', 'list', 'get', 'set_active', 'mark_step', 'delete'],
    },
    plan_id: { type: 'string', minLength: 1, description: 'Default the active plan.' },
    title: { type: 'string' },
    steps: { type: 'array', items: { type: 'string' } },
    step_index: { type: 'integer', minimum: 0, description: 'From 0.' },
    step_status: { type: 'string', enum: stepStatuses },
    step_notes: { type: 'string' },
  },
  required: ['command'],
} as const;

type PlanningInput = SchemaInput<typeof parameters>;

export default defineTool({
  name: 'planning',
  description: 'Make and track a plan for a complex task: create it, then mark_step as you go.',
  guide: [
    'Commands:',
    '* create: a new plan from title and steps (plan_id optional); it becomes the active plan.',
    '* update: change the title and/or steps of a plan; unchanged steps keep their status and notes.',
    '* list: all plans with their progress.',
    '* get: one plan with progress and each step\'s status.',
    '* set_active: make plan_id the active plan.',
    '* mark_step: set step_status and/or step_notes of the step at step_index (counting from 0).',
    '* delete: remove a plan.',
    'Commands other than create, set_active and delete use the active plan when plan_id is omitted.',
  ].join('\n'),
  sequential: true,
  parameters,
  async execute(input, context) {
    const storePath = join(context.runDirectory, storeFileName);
    const store = await readStore(storePath);
    const { text, changedPlan } = runCommand(input, store);
    if (changedPlan !== undefined) {
      await writeStore(storePath, store);
      emitChange(context, store, changedPlan);
    }
    return text;
  },
});

/** Applies a command to the store in memory; `changedPlan` names the plan that changed, if any. */
function runCommand(input: PlanningInput, store: PlanStore): { text: string; changedPlan?: string } {
  switch (input.command) {
    case 'create': {
      const title = requireParameter(input.title, 'title', 'create');
      const steps = requireParameter(input.steps, 'steps', 'create');
      if (steps.length === 0) throw new ToolError('steps is empty; a plan needs at least one step.', 'invalid_parameter');
      const id = input.plan_id ?? unusedPlanId(store);
      if (store.plans[id]) {
        throw new ToolError(`A plan with id "${id}" already exists; use update to change it.`, 'plan_exists');
      }
      store.plans[id] = { id, title, steps: steps.map((text) => ({ text, status: 'not_started', notes: '' })) };
      store.activePlanId = id;
      return { text: `Plan created successfully with id: ${id}\n\n${formatPlan(store.plans[id])}`, changedPlan: id };
    }
    case 'update': {
      const plan = findPlan(store, input.plan_id);
      if (input.title === undefined && input.steps === undefined) {
        throw new ToolError('Nothing to update: give title, steps or both.', 'missing_parameter');
      }
      if (input.title !== undefined) plan.title = input.title;
      if (input.steps !== undefined) {
        const earlier = plan.steps;
        plan.steps = input.steps.map((text, index) =>
          earlier[index]?.text === text ? earlier[index] : { text, status: 'not_started', notes: '' },
        );
      }
      return { text: `Plan updated successfully: ${plan.id}\n\n${formatPlan(plan)}`, changedPlan: plan.id };
    }
    case 'list':
      return { text: listPlans(store) };
    case 'get':
      return { text: formatPlan(findPlan(store, input.plan_id)) };
    case 'set_active': {
      const plan = findPlan(store, requireParameter(input.plan_id, 'plan_id', 'set_active'));
      store.activePlanId = plan.id;
      return { text: `Plan "${plan.id}" is now the active plan.\n\n${formatPlan(plan)}`, changedPlan: plan.id };
    }
    case 'mark_step': {
      const plan = findPlan(store, input.plan_id);
      const index = requireParameter(input.step_index, 'step_index', 'mark_step');
      if (index >= plan.steps.length) {
        throw new ToolError(
          `Invalid step_index ${index}: plan "${plan.id}" has steps 0 to ${plan.steps.length - 1}.`,
          'invalid_step_index',
        );
      }
      if (input.step_status === undefined && input.step_notes === undefined) {
        throw new ToolError('Nothing to mark: give step_status, step_notes or both.', 'missing_parameter');
      }
      const step = plan.steps[index];
      if (input.step_status !== undefined) step.status = input.step_status;
      if (input.step_notes !== undefined) step.notes = input.step_notes;
      return { text: `Step ${index} updated in plan "${plan.id}".\n\n${formatPlan(plan)}`, changedPlan: plan.id };
    }
    case 'delete': {
      const plan = findPlan(store, requireParameter(input.plan_id, 'plan_id', 'delete'));
      delete store.plans[plan.id];
      if (store.activePlanId === plan.id) store.activePlanId = null;
      return { text: `Plan "${plan.id}" has been deleted.`, changedPlan: plan.id };
    }
  }
}

/** The plan named by `planId`, or the active plan when none is named. */
function findPlan(store: PlanStore, planId: string | undefined): Plan {
  if (planId === undefined) {
    const active = store.activePlanId === null ? undefined : store.plans[store.activePlanId];
    if (!active) throw new ToolError('No active plan: give plan_id, or create a plan first.', 'no_active_plan');
    return active;
  }
  const plan = store.plans[planId];
  if (!plan) {
    const known = Object.keys(store.plans);
    const choices = known.length === 0 ? 'there are no plans yet' : `known plans: ${known.join(', ')}`;
    throw new ToolError(`No plan with id "${planId}" (${choices}).`, 'plan_not_found');
  }
  return plan;
}

function unusedPlanId(store: PlanStore): string {
  let number = Object.keys(store.plans).length + 1;
  while (store.plans[`plan-${number}`]) number += 1;
  return `plan-${number}`;
}

function formatPlan(plan: Plan): string {
  const count = (status: StepStatus) => plan.steps.filter((step) => step.status === status).length;
  const completed = count('completed');
  const total = plan.steps.length;
  const percentage = total === 0 ? 0 : (completed / total) * 100;
  const heading = `Plan: ${plan.title} (id: ${plan.id})`;
  const lines = [
    heading,
    '='.repeat(heading.length),
    '',
    `Progress: ${completed}/${total} steps completed (${percentage.toFixed(1)}%)`,
    `Status: ${completed} completed, ${count('in_progress')} in progress, ${count('blocked')} blocked, ` +
      `${count('not_started')} not started`,
    '',
    'Steps:',
  ];
  for (const [index, step] of plan.steps.entries()) {
    lines.push(`${index}. ${statusMarks[step.status]} ${step.text}`);
    if (step.notes) lines.push(`   Notes: ${step.notes}`);
  }
  return lines.join('\n');
}

function listPlans(store: PlanStore): string {
  const plans = Object.values(store.plans);
  if (plans.length === 0) return 'No plans available. Create one with the create command.';
  const lines = plans.map((plan) => {
    const completed = plan.steps.filter((step) => step.status === 'completed').length;
    const active = plan.id === store.activePlanId ? ' (active)' : '';
    return `- ${plan.id}${active}: ${plan.title} - ${completed}/${plan.steps.length} steps completed`;
  });
  return `Available plans:\n${lines.join('\n')}`;
}

async function readStore(path: string): Promise<PlanStore> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, activePlanId: null, plans: {} };
    throw error;
  }
  try {
    const store = JSON.parse(text) as PlanStore;
    if (store.version !== 1 || typeof store.plans !== 'object' || store.plans === null) throw new Error('unexpected shape');
    return store;
  } catch (error) {
    throw new ToolError(`The plans file ${path} cannot be read: ${(error as Error).message}.`, 'plans_unreadable');
  }
}

async function writeStore(path: string, store: PlanStore): Promise<void> {
  await writeFileAtomically(path, `${JSON.stringify(store, null, 2)}\n`);
}

/** Lets a progress display follow the plan without reading the file. */
function emitChange(context: ToolContext, store: PlanStore, planId: string): void {
  context.trace.emit('plan-changed', { planId, activePlanId: store.activePlanId, plan: store.plans[planId] ?? null });
}

function requireParameter<T>(value: T | undefined, name: string, command: string): T {
  if (value === undefined) throw new ToolError(`Parameter ${name} is required for command ${command}.`, 'missing_parameter');
  return value;
}
