import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRunRequest, AgentRunResult, StepContext } from '../runtime/contract/step-kind.js';
import type { ChatMessage } from '../runtime/contract/tool.js';
import planStep from '../plugins/planning/plan-step.js';
import planningFamily from '../plugins/planning/index.js';
import type { FlowPlan } from '../plugins/planning/flow-plan.js';
import { headAndTail, resultCharactersInPrompts } from '../plugins/planning/flow-plan-text.js';

type PlanStepFields = Parameters<typeof planStep.run>[0]['fields'];
type ScriptedRun = Partial<AgentRunResult> | ((request: AgentRunRequest) => Partial<AgentRunResult>);

interface Harness {
  context: StepContext<PlanStepFields>;
  requests: AgentRunRequest[];
  events: Array<{ type: string; data: Record<string, unknown> }>;
  runDirectory: string;
}

const folders: string[] = [];

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/**
 * A step context whose agents answer from a script, by sub-path: what the flow engine would give
 * the kind, with the agents' runs replaced by their results. Templates fill `{{task}}` only.
 */
function harness(fields: PlanStepFields, script: Record<string, ScriptedRun>, runDirectory?: string): Harness {
  const folder = runDirectory ?? mkdtempSync(join(tmpdir(), 'plan-step-'));
  if (!runDirectory) folders.push(folder);
  const requests: AgentRunRequest[] = [];
  const events: Harness['events'] = [];
  const context: StepContext<PlanStepFields> = {
    fields,
    name: 'work',
    path: 'work',
    render: (template) => template.replaceAll('{{task}}', 'Compare the populations of Lisbon and Porto'),
    async runAgent(request) {
      requests.push(structuredClone(request));
      const scripted = script[request.path];
      if (scripted === undefined) throw new Error(`nothing scripted for the sub-step ${request.path}`);
      const result = typeof scripted === 'function' ? scripted(request) : scripted;
      const answer = result.answer ?? `answer of ${request.path}`;
      const history: ChatMessage[] = [...(request.history ?? []), { role: 'user', content: request.task }, { role: 'assistant', content: answer }];
      return { status: 'success', answer, steps: 1, usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 }, cost: 0, history, ...result };
    },
    trace: { emit: (type, data) => events.push({ type, data: structuredClone(data) }) },
    runDirectory: folder,
    workspace: folder,
    signal: new AbortController().signal,
  };
  return { context, requests, events, runDirectory: folder };
}

function planned(steps: Array<{ title: string; description?: string; executor?: string }>, title = 'City populations'): Partial<AgentRunResult> {
  const structured = { title, steps: steps.map((step) => ({ description: `Do: ${step.title}.`, ...step })) };
  return { answer: JSON.stringify(structured), structured };
}

const baseFields: PlanStepFields = {
  planner: { agent: 'planner' },
  executors: ['manus', 'data_analysis'],
  default_executor: 'manus',
  max_replans: 2,
  step_budgets: { steps: 15, time_seconds: 60 },
  prompt: '{{task}}',
};

const paths = (requests: AgentRunRequest[]) => requests.map((request) => `${request.path} ${String(request.agent)}`);
const planUpdates = (events: Harness['events']) => events.filter((event) => event.type === 'plan-update');
const planFile = (runDirectory: string) => readFileSync(join(runDirectory, 'plan-work.md'), 'utf8');

describe('the plan step kind', () => {
  it('is exported by the planning family beside the planning tool, with its agent and template fields', () => {
    expect(planningFamily).toContain(planStep);
    expect(planStep.kind).toBe('plan');
    expect(planStep.agentFields).toEqual(['planner.agent', 'executors', 'default_executor']);
    expect(planStep.templateFields).toEqual(['prompt']);
  });

  it('plans, runs each step with the executor it names, and has the planner write the answer', async () => {
    const { context, requests } = harness(baseFields, {
      plan: planned([{ title: 'Find the populations', executor: 'manus' }, { title: 'Chart them', executor: 'data_analysis' }]),
      1: { answer: 'Lisbon 545,000; Porto 232,000.' },
      2: { answer: 'Wrote chart.png.' },
      answer: { answer: 'Lisbon has about 2.3 times the people of Porto (chart.png).' },
    });
    const result = await planStep.run(context);

    expect(result).toEqual({ status: 'success', answer: 'Lisbon has about 2.3 times the people of Porto (chart.png).' });
    expect(paths(requests)).toEqual(['plan planner', '1 manus', '2 data_analysis', 'answer planner']);
    const [planning, first, second, answering] = requests;
    expect(planning.task).toContain('Compare the populations of Lisbon and Porto');
    expect(planning.task).toContain('- manus (the default)\n- data_analysis');
    expect(planning.response).toMatchObject({
      required: ['title', 'steps'],
      properties: { steps: { minItems: 1, items: { properties: { executor: { enum: ['manus', 'data_analysis'] } } } } },
    });
    expect(first).toMatchObject({ title: 'Find the populations', budgets: { steps: 15, timeSeconds: 60 }, history: undefined });
    // The executor sees the plan with statuses, the earlier results and its own task.
    expect(second.task).toContain('1. [x] Find the populations (executor: manus; success)');
    expect(second.task).toContain('2. [>] Chart them (executor: data_analysis; running)');
    expect(second.task).toContain('Step 1 (Find the populations, by manus): success\nLisbon 545,000; Porto 232,000.');
    expect(second.task).toContain('Your step: 2. Chart them\nDo: Chart them.');
    expect(answering.task).toContain('Wrote chart.png.');
    expect(answering.response).toBeUndefined();
  });

  it('gives a step that names no executor to default_executor, and to the first executor when there is no default', async () => {
    const script = {
      plan: planned([{ title: 'Gather' }, { title: 'Analyse', executor: 'data_analysis' }, { title: 'Report' }]),
      1: {}, 2: {}, 3: {}, answer: {},
    };
    const withDefault = harness({ ...baseFields, default_executor: 'data_analysis' }, script);
    await planStep.run(withDefault.context);
    expect(paths(withDefault.requests)).toEqual(['plan planner', '1 data_analysis', '2 data_analysis', '3 data_analysis', 'answer planner']);

    const withoutDefault = harness({ ...baseFields, default_executor: undefined }, script);
    await planStep.run(withoutDefault.context);
    expect(paths(withoutDefault.requests)).toEqual(['plan planner', '1 manus', '2 data_analysis', '3 manus', 'answer planner']);
  });

  it('fails before any agent runs when default_executor is not one of the executors', async () => {
    const { context, requests } = harness({ ...baseFields, default_executor: 'browser' }, {});
    const result = await planStep.run(context);
    expect(result).toEqual({ status: 'failure', answer: '', reason: "default_executor 'browser' is not one of the executors (manus, data_analysis)" });
    expect(requests).toEqual([]);
  });

  it('marks a step that fails with its reason and has the planner revise the steps not yet run', async () => {
    const { context, requests, runDirectory } = harness(baseFields, {
      plan: planned([{ title: 'Download the census table', executor: 'data_analysis' }, { title: 'Summarise', executor: 'manus' }]),
      1: { status: 'failure', answer: 'The census site refused the download.', reason: 'HTTP 403 from the census site' },
      'replan-1': planned([{ title: 'Search the figures on the web', executor: 'manus' }, { title: 'Summarise', executor: 'manus' }]),
      2: { answer: 'Lisbon 545,000; Porto 232,000 (Wikipedia).' },
      3: { answer: 'Lisbon is about 2.3 times Porto.' },
      answer: { answer: 'Lisbon is about 2.3 times as populous as Porto.' },
    });
    const result = await planStep.run(context);

    expect(result.status).toBe('success');
    // The failed step keeps its number; the revision's steps follow it, and the old step 2 never ran.
    expect(paths(requests)).toEqual(['plan planner', '1 data_analysis', 'replan-1 planner', '2 manus', '3 manus', 'answer planner']);
    const replanning = requests[2];
    expect(replanning.task).toContain('Step 1 (Download the census table) did not succeed (failure): HTTP 403 from the census site');
    expect(replanning.task).toContain('2. [ ] Summarise (executor: manus; pending)');
    expect(replanning.response).toMatchObject({ properties: { steps: { minItems: 0 } } });
    expect(requests[3].task).toContain('1. [!] Download the census table (executor: data_analysis; failure: HTTP 403 from the census site)');
    expect(requests[3].task).toContain('Your step: 2. Search the figures on the web');

    const file = planFile(runDirectory);
    expect(file).toContain('### 1. [!] Download the census table\n\n- Executor: data_analysis\n- Status: failure\n- Reason: HTTP 403 from the census site');
    expect(file).toContain('### 2. [x] Search the figures on the web\n\n- Executor: manus\n- Status: success');
    expect(file).toContain('the plan was revised 1 of at most 2 times');
    expect(file).not.toContain('### 2. [ ] Summarise');
  });

  it('replans after a step runs out of its budget or gets stuck, and goes to the answer when the revision has no steps', async () => {
    const { context, requests } = harness({ ...baseFields, max_replans: 3 }, {
      plan: planned([{ title: 'Crawl every district page' }]),
      1: { status: 'budget-exhausted', answer: '', reason: 'the step budget of 15 steps ran out' },
      'replan-1': planned([{ title: 'Use the summary table' }]),
      2: { status: 'stuck', answer: 'Repeated the same call.', reason: undefined },
      'replan-2': planned([]),
      answer: { answer: 'Partial: the figures could not be fetched.' },
    });
    const result = await planStep.run(context);
    expect(result).toEqual({ status: 'success', answer: 'Partial: the figures could not be fetched.' });
    expect(paths(requests)).toEqual(['plan planner', '1 manus', 'replan-1 planner', '2 manus', 'replan-2 planner', 'answer planner']);
    // With no reason given, the executor's answer explains the ending.
    expect(requests[4].task).toContain('Step 2 (Use the summary table) did not succeed (stuck): Repeated the same call.');
  });

  it('fails with the reason once max_replans revisions are used up, without writing an answer', async () => {
    const { context, requests, runDirectory } = harness({ ...baseFields, max_replans: 1 }, {
      plan: planned([{ title: 'Fetch the data' }]),
      1: { status: 'failure', answer: 'No network.' },
      'replan-1': planned([{ title: 'Fetch the data from a mirror' }]),
      2: { status: 'failure', answer: 'The mirror is down.', reason: 'connection refused' },
    });
    const result = await planStep.run(context);

    expect(paths(requests)).toEqual(['plan planner', '1 manus', 'replan-1 planner', '2 manus']);
    expect(result.status).toBe('failure');
    expect(result.reason).toBe('step 2 (Fetch the data from a mirror) ended with failure: connection refused; the plan was already revised 1 time(s), as many as max_replans allows');
    // The answer is the plan as it stands, with what each step did.
    expect(result.answer).toBe(planFile(runDirectory));
    expect(result.answer).toContain('- Reason: No network.');
  });

  it('fails at the first failed step when max_replans is 0', async () => {
    const { context, requests } = harness({ ...baseFields, max_replans: 0 }, {
      plan: planned([{ title: 'Fetch' }, { title: 'Report' }]),
      1: { status: 'failure', reason: 'no network' },
    });
    const result = await planStep.run(context);
    expect(paths(requests)).toEqual(['plan planner', '1 manus']);
    expect(result).toMatchObject({ status: 'failure', reason: expect.stringMatching(/^step 1 \(Fetch\) ended with failure: no network; the plan was already revised 0 time/) });
  });

  it('stops without replanning when an executor is interrupted or needs a person', async () => {
    for (const status of ['interrupted', 'needs-input'] as const) {
      const { context, requests } = harness(baseFields, {
        plan: planned([{ title: 'Ask the user which year' }, { title: 'Report' }]),
        1: { status, answer: '', reason: `the run ended: ${status}` },
      });
      const result = await planStep.run(context);
      expect(paths(requests)).toEqual(['plan planner', '1 manus']);
      expect(result).toMatchObject({ status, reason: `step 1 (Ask the user which year) ended with ${status}: the run ended: ${status}` });
    }
  });

  it('ends with the planner\'s status and reason when the planner cannot plan, revise or answer', async () => {
    const noPlan = harness(baseFields, { plan: { status: 'failure', answer: 'This task needs a time machine.', reason: 'impossible task' } });
    expect(await planStep.run(noPlan.context)).toEqual({ status: 'failure', answer: 'This task needs a time machine.', reason: 'the planner made no plan: impossible task' });

    const noRevision = harness(baseFields, {
      plan: planned([{ title: 'Fetch' }]),
      1: { status: 'failure', reason: 'no network' },
      'replan-1': { status: 'budget-exhausted', answer: '', reason: 'the flow\'s token budget ran out' },
    });
    expect(await planStep.run(noRevision.context)).toMatchObject({
      status: 'budget-exhausted',
      reason: 'step 1 (Fetch) ended with failure: no network; the planner did not revise the plan: the flow\'s token budget ran out',
    });

    const noAnswer = harness(baseFields, { plan: planned([{ title: 'Fetch' }]), 1: {}, answer: { status: 'stuck', answer: '', reason: 'repeated itself' } });
    expect(await planStep.run(noAnswer.context)).toMatchObject({ status: 'stuck', reason: 'the planner did not write the answer: repeated itself' });
  });

  it('refuses a plan that names an executor the step does not have', async () => {
    const { context, requests } = harness(baseFields, { plan: planned([{ title: 'Browse', executor: 'browser' }]) });
    expect(await planStep.run(context)).toMatchObject({
      status: 'failure',
      reason: 'step 1 of the planner\'s plan names the executor "browser", which is not one of manus, data_analysis',
    });
    expect(paths(requests)).toEqual(['plan planner']);
  });

  it('continues each executor\'s own conversation with share_history, and starts afresh without it', async () => {
    const script = {
      plan: planned([{ title: 'One', executor: 'manus' }, { title: 'Two', executor: 'data_analysis' }, { title: 'Three', executor: 'manus' }]),
      1: {}, 2: {}, 3: {}, answer: {},
    };
    const shared = harness({ ...baseFields, share_history: true }, script);
    await planStep.run(shared.context);
    const [, one, two, three] = shared.requests;
    expect(one.history).toBeUndefined();
    expect(two.history).toBeUndefined();
    // Step 3 goes on from manus's conversation in step 1, not from data_analysis's in step 2.
    expect(three.history).toEqual([{ role: 'user', content: one.task }, { role: 'assistant', content: 'answer of 1' }]);

    const fresh = harness(baseFields, script);
    await planStep.run(fresh.context);
    expect(fresh.requests.map((request) => request.history)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('passes the planner\'s budgets and the answer format to the planner, and returns the structured answer', async () => {
    const response = { type: 'object', required: ['ratio'], properties: { ratio: { type: 'number' } } };
    const { context, requests } = harness({ ...baseFields, planner: { agent: 'planner', budgets: { tokens: 20000 } }, response }, {
      plan: planned([{ title: 'Compute' }]),
      1: {},
      answer: { answer: '{"ratio": 2.3}', structured: { ratio: 2.3 } },
    });
    expect(await planStep.run(context)).toEqual({ status: 'success', answer: '{"ratio": 2.3}', structured: { ratio: 2.3 } });
    expect(requests[0].budgets).toEqual({ tokens: 20000 });
    expect(requests[2]).toMatchObject({ path: 'answer', response, budgets: { tokens: 20000 } });
  });

  it('takes an inline planner agent as written', async () => {
    const inline = { system_prompt: 'You plan.', tools: ['terminate'] };
    const { context, requests } = harness({ ...baseFields, planner: { agent: inline } }, { plan: planned([{ title: 'Compute' }]), 1: {}, answer: {} });
    await planStep.run(context);
    expect(requests.map((request) => [request.path, request.agent])).toEqual([['plan', inline], ['1', 'manus'], ['answer', inline]]);
  });

  it('keeps the plan file up to date: every step\'s status, executor and result, then the answer', async () => {
    let fileWhileStepTwoRuns = '';
    const { context, runDirectory } = harness(baseFields, {
      plan: planned([{ title: 'Find the populations', executor: 'manus' }, { title: 'Chart them', executor: 'data_analysis' }]),
      1: { answer: 'Lisbon 545,000; Porto 232,000.' },
      2: () => {
        fileWhileStepTwoRuns = planFile(runDirectory);
        return { answer: 'Wrote chart.png.' };
      },
      answer: { answer: 'Lisbon is larger.' },
    });
    await planStep.run(context);

    expect(fileWhileStepTwoRuns).toContain('### 2. [>] Chart them\n\n- Executor: data_analysis\n- Status: running');
    expect(planFile(runDirectory)).toBe([
      '# Plan: City populations',
      '',
      '## Task',
      '',
      'Compare the populations of Lisbon and Porto',
      '',
      'Progress: 2 of 2 steps succeeded, 0 did not; the plan was revised 0 of at most 2 times.',
      '',
      '## Steps',
      '',
      '### 1. [x] Find the populations',
      '',
      '- Executor: manus',
      '- Status: success',
      '',
      'Do: Find the populations.',
      '',
      'Result:',
      '',
      'Lisbon 545,000; Porto 232,000.',
      '',
      '### 2. [x] Chart them',
      '',
      '- Executor: data_analysis',
      '- Status: success',
      '',
      'Do: Chart them.',
      '',
      'Result:',
      '',
      'Wrote chart.png.',
      '',
      '## Answer',
      '',
      'Lisbon is larger.',
      '',
    ].join('\n'));
    expect(readdirSync(runDirectory)).toEqual(['plan-work.md']);
  });

  it('gives later prompts the head and tail of a long result, and keeps it whole in the plan file', async () => {
    const long = `${'head '.repeat(1000)}${'middle '.repeat(1000)}${'tail '.repeat(1000)}`.trim();
    const { context, requests, runDirectory } = harness(baseFields, {
      plan: planned([{ title: 'Dump the table' }, { title: 'Summarise' }]),
      1: { answer: long },
      2: {},
      answer: {},
    });
    await planStep.run(context);
    const omitted = long.length - resultCharactersInPrompts;
    for (const request of requests.slice(2)) {
      expect(request.task).toContain(`head head \n[... ${omitted} characters left out ...]\n tail tail`);
      expect(request.task).not.toContain('middle middle middle');
    }
    expect(planFile(runDirectory)).toContain(long);
    // Characters outside the Basic Multilingual Plane are counted whole, never split.
    expect(headAndTail('\u{1D538}'.repeat(10), 4)).toBe('\u{1D538}\u{1D538}\n[... 6 characters left out ...]\n\u{1D538}\u{1D538}');
  });

  it('names the plan file after the step\'s path inside a fan-out', async () => {
    const { context, runDirectory } = harness(baseFields, { plan: planned([{ title: 'Compute' }]), 1: {}, answer: {} });
    await planStep.run({ ...context, path: 'research/2' });
    expect(readdirSync(runDirectory)).toEqual(['plan-research-2.md']);
  });

  it('emits a plan-update event with the whole plan after every change', async () => {
    const { context, events } = harness(baseFields, {
      plan: planned([{ title: 'Fetch' }, { title: 'Report' }]),
      1: { status: 'failure', reason: 'no network' },
      'replan-1': planned([{ title: 'Report from memory' }]),
      2: { answer: 'Done from memory.' },
      answer: {},
    });
    await planStep.run(context);

    const updates = planUpdates(events);
    expect(updates).toHaveLength(events.length);
    expect(updates.map(({ data }) => [data.change, data.step])).toEqual([
      ['created', undefined],
      ['step-start', 1],
      ['step-end', 1],
      ['revised', undefined],
      ['step-start', 2],
      ['step-end', 2],
      ['answered', undefined],
    ]);
    expect(updates.every(({ data }) => data.file === 'plan-work.md')).toBe(true);
    const afterFailure = updates[2].data.plan as FlowPlan;
    expect(afterFailure.steps.map((step) => [step.number, step.status, step.executor, step.reason])).toEqual([
      [1, 'failure', 'manus', 'no network'],
      [2, 'pending', 'manus', undefined],
    ]);
    const last = updates[updates.length - 1].data.plan as FlowPlan;
    expect(last).toMatchObject({ title: 'City populations', replans: 1, answer: 'answer of answer' });
    expect(last.steps.map((step) => [step.number, step.title, step.status, step.result])).toEqual([
      [1, 'Fetch', 'failure', 'answer of 1'],
      [2, 'Report from memory', 'success', 'Done from memory.'],
    ]);
  });

  it('decides only from the agents\' results: a resumed run given the recorded results asks for the same sub-steps', async () => {
    const script = {
      plan: planned([{ title: 'Fetch', executor: 'data_analysis' }, { title: 'Report' }]),
      1: { status: 'failure' as const, reason: 'no network' },
      'replan-1': planned([{ title: 'Report from memory' }]),
      2: {},
      answer: {},
    };
    const first = harness({ ...baseFields, share_history: true }, script);
    const firstResult = await planStep.run(first.context);
    // A resumption runs the kind again in the same run folder; the engine gives finished sub-steps' results back.
    const resumed = harness({ ...baseFields, share_history: true }, script, first.runDirectory);
    const resumedResult = await planStep.run(resumed.context);

    expect(resumed.requests).toEqual(first.requests);
    expect(resumedResult).toEqual(firstResult);
    expect(planUpdates(resumed.events).map(({ data }) => data.plan)).toEqual(planUpdates(first.events).map(({ data }) => data.plan));
  });
});
