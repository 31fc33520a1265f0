/**
 * Flows run in-process against a scripted model: agent and parallel steps, templates between
 * steps, budgets across the flow, failures, events tagged by step path, and the checks a flow
 * recipe gets before anything runs.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { ConfigError } from '../runtime/contract/errors.js';
import { loadRecipeFile } from '../runtime/runs/recipe/load-recipe.js';
import { parameterArguments, recipeInputSchema } from '../runtime/applications/mcp-server/recipe-input-schema.js';
import { executeRun } from '../runtime/runs/run.js';
import { FlowResume } from '../runtime/runs/flow/flow-resume.js';
import { readRecordedRun } from '../runtime/runs/recorded-run.js';
import { branchNames } from '../runtime/features/flow/branch-names.js';
import { readEvents } from './support/run-cli.js';
import { callReply, messageText, ScriptedChatModel, terminateReply, type ReceivedRequest, type ScriptedTurn } from './support/scripted-chat-model.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-flows-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;

const agentsYaml = `version: 1
llm:
  default: { provider: openai-compatible }
agents:
  writer:
    description: Writes.
    system_prompt: You write.
    tools: [terminate]
  researcher:
    description: Researches.
    system_prompt: You research.
    tools: [terminate]
`;

function flowFolder(recipe: string): string {
  const folder = join(root, `flow-${(folders += 1)}`);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'recipe.yaml'), recipe);
  writeFileSync(join(folder, 'agents.yaml'), agentsYaml);
  return folder;
}

async function runFlow(recipe: string, turns: ScriptedTurn[] | ScriptedChatModel, parameters: Record<string, string> = {}) {
  const folder = flowFolder(recipe);
  const model = turns instanceof ScriptedChatModel ? turns : new ScriptedChatModel(turns);
  const environment = { XDG_CONFIG_HOME: join(folder, 'no-user-config') };
  const plan = await resolveRecipe('recipe.yaml', { cwd: folder, overrides: { parameters }, environment });
  const result = await executeRun(plan, { cwd: folder, environment, signal: new AbortController().signal, interactive: false, model });
  return { result, model, events: readEvents(result.runDirectory), folder };
}

async function flowProblems(recipe: string, parameters: Record<string, string> = {}): Promise<string[]> {
  const folder = flowFolder(recipe);
  try {
    await resolveRecipe('recipe.yaml', { cwd: folder, overrides: { parameters }, environment: { XDG_CONFIG_HOME: join(folder, 'none') } });
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.diagnostics.filter((diagnostic) => diagnostic.severity === 'error').map((diagnostic) => `${diagnostic.location?.line ?? '?'}: ${diagnostic.message}`);
    throw error;
  }
  return [];
}

const userText = (request: ReceivedRequest) => request.messages.filter((message) => message.role === 'user').map(messageText).join('\n');

describe('a flow of agent steps', () => {
  it('runs the steps in order, each with its own agent, and later prompts read earlier answers', async () => {
    const { result, model, events } = await runFlow(`version: 1
name: two-steps
parameters:
  topic: { type: string }
flow:
  - name: outline
    kind: agent
    agent: researcher
    prompt: List sub-questions about {{topic}}.
    response: { type: object, required: [questions], properties: { questions: { type: array, items: { type: string } } } }
  - name: report
    kind: agent
    agent: writer
    prompt: "Write about {{topic}} from: {{steps.outline.structured.questions}}"
`, [
      callReply('create_chat_completion', { response: { questions: ['Why?', 'How?'] } }),
      terminateReply('The report.'),
    ], { topic: 'owls' });
    expect(result.status, result.answer).toBe('success');
    expect(result.answer).toBe('The report.');
    expect(model.requests[0].messages[0]).toMatchObject({ role: 'system', content: 'You research.' });
    expect(userText(model.requests[0])).toContain('List sub-questions about owls.');
    expect(model.requests[0].toolNames).toEqual(['terminate', 'create_chat_completion']);
    expect(model.requests[1].messages[0]).toMatchObject({ role: 'system', content: 'You write.' });
    expect(userText(model.requests[1])).toContain('Write about owls from: [\n  "Why?",\n  "How?"\n]');
    expect(model.requests[1].toolNames).toEqual(['terminate']);
    expect(result.steps).toBe(2);
    expect(result.usage.totalTokens).toBe(30);
    expect(result.flowSteps?.map((step) => [step.path, step.status])).toEqual([['outline', 'success'], ['report', 'success']]);
    // Every event of a step carries its path.
    const responses = events.filter((event) => event.type === 'model-response');
    expect(responses.map((event) => event.path)).toEqual(['outline', 'report']);
    expect(events.filter((event) => event.type === 'flow-step-end').map((event) => [event.path, event.status])).toEqual([['outline', 'success'], ['report', 'success']]);
    expect(events[0]).toMatchObject({ type: 'run-start', flow: { steps: [{ name: 'outline', kind: 'agent' }, { name: 'report', kind: 'agent' }] } });
  });

  it('stops at a step that fails, unless it may fail, and says which', async () => {
    const recipe = (mayFail: boolean) => `version: 1
name: failing
flow:
  - name: first
    kind: agent
    agent: researcher
    prompt: Try.
    continue_on_failure: ${mayFail}
  - name: second
    kind: agent
    agent: writer
    prompt: "Go on after: {{steps.first.status}}"
`;
    const stopped = await runFlow(recipe(false), [terminateReply('cannot', 'failure')]);
    expect(stopped.result.status).toBe('failure');
    expect(stopped.result.answer).toContain('The flow stopped at step first: cannot');
    expect(stopped.model.requests).toHaveLength(1);

    const goneOn = await runFlow(recipe(true), [terminateReply('cannot', 'failure'), terminateReply('recovered')]);
    expect(goneOn.result.status).toBe('success');
    expect(userText(goneOn.model.requests[1])).toContain('Go on after: failure');
  });

  it('holds the flow\'s budget across its steps, and a step\'s own within it', async () => {
    const { result, model } = await runFlow(`version: 1
name: budgets
budgets: { steps: 3 }
flow:
  - name: first
    kind: agent
    agent: researcher
    prompt: Work.
    budgets: { steps: 2 }
  - name: second
    kind: agent
    agent: writer
    prompt: Work more.
    continue_on_failure: true
`, [callReply('step_state'), callReply('step_state'), terminateReply('late')]);
    expect(model.requests).toHaveLength(2);
    expect(result.flowSteps?.map((step) => [step.path, step.status])).toEqual([['first', 'budget-exhausted']]);
    expect(result.status).toBe('failure');
  });

  it('ends budget-exhausted when the flow\'s own budget runs out', async () => {
    const { result, model } = await runFlow(`version: 1
name: budgets
budgets: { steps: 2 }
flow:
  - name: first
    kind: agent
    agent: researcher
    prompt: Work.
  - name: second
    kind: agent
    agent: writer
    prompt: Work more.
`, [terminateReply('one'), callReply('step_state'), terminateReply('late')]);
    expect(model.requests).toHaveLength(2);
    expect(result.status).toBe('budget-exhausted');
    expect(result.exhaustedBudget).toBe('steps');
  });
});

describe('a parallel step', () => {
  it('runs one step for each item at once, and later steps read the answers in order', async () => {
    const model = new ScriptedChatModel();
    let running = 0;
    let most = 0;
    const answerFor = (request: ReceivedRequest): ScriptedTurn => {
      const item = /Answer: (\w+)/.exec(userText(request))?.[1] ?? '?';
      return { ...terminateReply(`about ${item}`), delayMs: 50 };
    };
    // The replies come in whatever order the items ask; each answers its own item.
    const counting = (request: ReceivedRequest) => {
      running += 1;
      most = Math.max(most, running);
      setTimeout(() => (running -= 1), 50);
      return answerFor(request) as ReturnType<typeof terminateReply>;
    };
    model.enqueue(counting, counting, counting, terminateReply('report'));
    const { result, events } = await runFlow(`version: 1
name: fan-out
parameters:
  topics: { type: list }
flow:
  - name: research
    kind: parallel
    for_each: "{{topics}}"
    max_concurrency: 3
    step: { kind: agent, agent: researcher, prompt: "Answer: {{item}}" }
  - name: report
    kind: agent
    agent: writer
    prompt: "Report: {{steps.research.answers}}"
`, model, { topics: 'owls,bats,moths' });
    expect(result.status, result.answer).toBe('success');
    expect(most).toBe(3);
    expect(userText(model.requests[3])).toContain('Report: [\n  "about owls",\n  "about bats",\n  "about moths"\n]');
    // Each branch is named after its item.
    expect(result.flowSteps?.map((step) => step.path)).toEqual(expect.arrayContaining(['research/owls', 'research/bats', 'research/moths', 'research', 'report']));
    // Each branch counts what it spent itself, though they ran at the same time.
    const spent = Object.fromEntries((result.flowSteps ?? []).map((step) => [step.path, step.steps]));
    expect(spent).toEqual({ 'research/owls': 1, 'research/bats': 1, 'research/moths': 1, research: 3, report: 1 });
    expect(new Set(events.filter((event) => event.type === 'model-response').map((event) => event.path))).toEqual(new Set(['research/owls', 'research/bats', 'research/moths', 'report']));
  });

  it('names branches after their items, shortened, made safe and kept distinct', () => {
    const long = 'What share of the world\'s electricity came from solar power in 2024?';
    expect(branchNames(['Lisbon, Portugal', 'São Paulo', long, 'lisbon portugal', '', '../etc/passwd', 42, { name: 'Oslo', size: 3 }, { size: 3 }, '東京'])).toEqual([
      'lisbon-portugal',
      'são-paulo',
      'what-share-of-the-world-s',
      'lisbon-portugal-2',
      '5',
      'etc-passwd',
      '42',
      'oslo',
      'size-3',
      '東京',
    ]);
    expect(branchNames(['', '1'])).toEqual(['1', '1-2']);
  });

  it('fails naming the step when for_each gives no list', async () => {
    const { result } = await runFlow(`version: 1
name: not-a-list
flow:
  - name: outline
    kind: agent
    agent: researcher
    prompt: Outline.
  - name: research
    kind: parallel
    for_each: "{{steps.outline.answer}}"
    step: { kind: agent, agent: researcher, prompt: "{{item}}" }
`, [terminateReply('just text')]);
    expect(result.status).toBe('failure');
    expect(result.answer).toContain("for_each of the parallel step 'research' gave \"just text\", not a list");
  });
});

describe('a flow recipe is checked before anything runs', () => {
  it('names references to steps that have not run, unknown kinds and fields, unused parameters and stray items', async () => {
    const problems = await flowProblems(`version: 1
name: broken
parameters:
  topic: { type: string, default: owls }
  unused: { type: string, default: x }
flow:
  - name: first
    kind: agent
    agent: researcher
    prompt: "{{steps.second.answer}} {{item}} {{topic}}"
    promt: typo
  - name: second
    kind: agnet
  - name: third
    kind: agent
    agent: nobody
    prompt: "{{steps.first.answers}} {{steps.first.structured.x}}"
`);
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/\{\{steps\.second\.answer\}\}: no step named 'second' runs before this one/),
      expect.stringMatching(/\{\{item\}\}: \{\{item\}\} is the item of a fan-out/),
      expect.stringMatching(/a agent step has no field 'promt' \(did you mean 'prompt'\?\)/),
      expect.stringMatching(/no step kind 'agnet' \(did you mean 'agent'\?\)/),
      expect.stringMatching(/no agent named 'nobody'/),
      expect.stringMatching(/'first' is not a parallel step/),
      expect.stringMatching(/'first' gives no structured answer/),
      expect.stringMatching(/parameter 'unused' is never used by a step of the flow/),
    ]));
  });

  it('refuses agent: and flow: together, a top-level prompt, and a duplicate step name', async () => {
    const problems = await flowProblems(`version: 1
name: both
agent: writer
prompt: Hello.
flow:
  - { name: one, kind: agent, agent: writer, prompt: A. }
  - { name: one, kind: agent, agent: writer, prompt: B. }
`);
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/a recipe has agent: or flow:, not both/),
      expect.stringMatching(/a flow has no top-level prompt/),
      expect.stringMatching(/two flow steps are named 'one'/),
    ]));
  });
});

describe('agents as tools', () => {
  const callingAgents = `version: 1
llm:
  default: { provider: openai-compatible }
agents:
  lead:
    description: Leads.
    system_prompt: You lead.
    tools: [agent:helper, terminate]
  helper:
    description: Looks things up.
    system_prompt: You help.
    tools: [terminate]
`;

  async function runWithAgents(agents: string, recipe: string, turns: ScriptedTurn[]) {
    const folder = flowFolder(recipe);
    writeFileSync(join(folder, 'agents.yaml'), agents);
    const model = new ScriptedChatModel(turns);
    const environment = { XDG_CONFIG_HOME: join(folder, 'no-user-config') };
    const plan = await resolveRecipe('recipe.yaml', { cwd: folder, environment });
    const result = await executeRun(plan, { cwd: folder, environment, signal: new AbortController().signal, interactive: false, model });
    return { result, model, events: readEvents(result.runDirectory) };
  }

  it('offers another agent as a tool taking a task; its answer comes back, and its tokens count in the run', async () => {
    const { result, model, events } = await runWithAgents(callingAgents, 'version: 1\nname: lead\nprompt: Find out.\nagent: lead\n', [
      callReply('agent_helper', { task: 'Look up the capital of Peru.' }),
      terminateReply('Lima, it says.'),
      terminateReply('Peru: Lima'),
    ]);
    expect(result.status, result.answer).toBe('success');
    expect(model.requests[0].toolNames).toEqual(['terminate', 'agent_helper']);
    expect(model.requests[0].tools?.find((tool) => tool.function.name === 'agent_helper')?.function.description).toContain('Looks things up.');
    // The called agent starts fresh, with its own prompt and only the task.
    expect(model.requests[1].messages.map((message) => message.role)).toEqual(['system', 'user']);
    expect(model.requests[1].messages[0]).toMatchObject({ content: 'You help.' });
    expect(userText(model.requests[1])).toContain('Look up the capital of Peru.');
    expect(model.requests[2].messages.at(-1)).toMatchObject({ role: 'tool', content: 'Lima, it says.' });
    expect(result.answer).toBe('Peru: Lima');
    expect(result.usage.totalTokens).toBe(45);
    const called = events.filter((event) => typeof event.path === 'string' && event.path.startsWith('agent_helper/'));
    expect(called.some((event) => event.type === 'model-response')).toBe(true);
  });

  it('in a flow step too, under the step\'s path', async () => {
    const { result, events } = await runWithAgents(callingAgents, `version: 1
name: lead-flow
flow:
  - name: work
    kind: agent
    agent: lead
    prompt: Find out.
`, [callReply('agent_helper', { task: 'Look it up.' }), terminateReply('found'), terminateReply('done')]);
    expect(result.status).toBe('success');
    expect(events.filter((event) => event.type === 'model-response').map((event) => event.path)).toEqual(['work', expect.stringMatching(/^work\/agent_helper\//), 'work']);
  });

  it('refuses an agent that would call itself through others, and an unknown one', async () => {
    const folder = flowFolder('version: 1\nname: loop\nprompt: Go.\nagent: first\n');
    writeFileSync(join(folder, 'agents.yaml'), `version: 1
agents:
  first: { tools: [agent:second, terminate] }
  second: { tools: [agent:first, agent:nobody, terminate] }
`);
    const error = await resolveRecipe('recipe.yaml', { cwd: folder, environment: { XDG_CONFIG_HOME: join(folder, 'none') } }).catch((caught: unknown) => caught);
    expect(ConfigError.isInstance(error)).toBe(true);
    const messages = (error as ConfigError).diagnostics.map((diagnostic) => diagnostic.message);
    expect(messages).toEqual(expect.arrayContaining([
      expect.stringMatching(/agent 'first' would call itself: first -> agent:second -> agent:first/),
      expect.stringMatching(/agent 'second' lists agent:nobody, but there is no agent named 'nobody'/),
    ]));
  });
});

describe('a flow served over MCP as a tool', () => {
  it('takes its parameters, lists as arrays, and no task of its own', async () => {
    const folder = flowFolder(`version: 1
name: served
parameters:
  topics: { type: list, default: [a] }
flow:
  - { name: one, kind: agent, agent: writer, prompt: "{{topics}}" }
`);
    const { recipe } = loadRecipeFile(join(folder, 'recipe.yaml'));
    expect(recipeInputSchema(recipe!)).toEqual({
      type: 'object',
      properties: { topics: { type: 'array', items: { type: 'string' }, default: ['a'] } },
      additionalProperties: false,
    });
    expect(parameterArguments(recipe!, { topics: ['x, y', 'z'] })).toEqual({ topics: '["x, y","z"]' });
  });
});

describe('a resumed flow', () => {
  it('keeps the steps that finished, and continues the one that stopped on a question from its own history', async () => {
    const recipe = `version: 1
name: resumable
flow:
  - name: first
    kind: agent
    agent: researcher
    prompt: Research.
  - name: second
    kind: agent
    agent: { system_prompt: You ask., tools: [ask_human, terminate] }
    prompt: "Ask about {{steps.first.answer}}."
`;
    const stopped = await runFlow(recipe, [terminateReply('facts'), callReply('ask_human', { question: 'Which colour?' })]);
    expect(stopped.result.status).toBe('needs-input');

    const recorded = readRecordedRun(join(stopped.result.runDirectory, 'events.jsonl'), { repair: true });
    const flow = new FlowResume(recorded, ['blue']);
    expect([...flow.finished.keys()]).toEqual(['first']);
    const model = new ScriptedChatModel([terminateReply('blue it is')]);
    const environment = { XDG_CONFIG_HOME: join(stopped.folder, 'no-user-config') };
    const plan = await resolveRecipe('recipe.yaml', { cwd: stopped.folder, environment });
    const result = await executeRun(plan, {
      cwd: stopped.folder,
      environment,
      signal: new AbortController().signal,
      interactive: false,
      model,
      answers: flow.answersLeft,
      resume: { runId: stopped.result.runId, runDirectory: stopped.result.runDirectory, workspace: stopped.result.workspace, state: { history: [], step: 0, usage: flow.spent.usage, files: [] }, flow },
    });
    expect(result.status, result.answer).toBe('success');
    expect(result.answer).toBe('blue it is');
    // Only the second step asked the model again, with its own conversation and the answer.
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0].messages[0]).toMatchObject({ role: 'system', content: 'You ask.' });
    expect(userText(model.requests[0])).toContain('Ask about facts.');
    expect(model.requests[0].messages.at(-1)).toMatchObject({ role: 'tool', content: 'blue' });
    expect(result.steps).toBe(3);
  });
});
