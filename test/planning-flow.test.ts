/**
 * The planning flow through the real engine: a planner plans steps for two executors, a step that
 * fails is replanned, and the plan file and events show every step's status and executor.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { executeRun } from '../runtime/runs/run.js';
import { readEvents } from './support/run-cli.js';
import { callReply, messageText, ScriptedChatModel, terminateReply, type ReceivedRequest, type ScriptedTurn } from './support/scripted-chat-model.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-plan-flow-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;

const agentsYaml = `version: 1
llm:
  default: { provider: openai-compatible }
agents:
  researcher: { description: Researches., system_prompt: You research., tools: [terminate] }
  writer: { description: Writes., system_prompt: You write., tools: [terminate] }
`;

const recipe = `version: 1
name: planned
parameters:
  task: { type: string }
flow:
  - name: work
    kind: plan
    planner: { agent: planner }
    executors: [researcher, writer]
    default_executor: writer
    max_replans: 1
    prompt: "{{task}}"
`;

async function runPlanned(turns: ScriptedTurn[]) {
  const folder = join(root, `run-${(folders += 1)}`);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'recipe.yaml'), recipe);
  writeFileSync(join(folder, 'agents.yaml'), agentsYaml);
  const model = new ScriptedChatModel(turns);
  const environment = { XDG_CONFIG_HOME: join(folder, 'no-user-config') };
  const plan = await resolveRecipe('recipe.yaml', { cwd: folder, overrides: { parameters: { task: 'Write about owls.' } }, environment });
  const result = await executeRun(plan, { cwd: folder, environment, signal: new AbortController().signal, interactive: false, model });
  return { result, model, events: readEvents(result.runDirectory) };
}

const planReply = (steps: Array<{ title: string; executor?: string }>): ScriptedTurn =>
  callReply('create_chat_completion', { response: { title: 'Owls', steps: steps.map((step) => ({ description: `Do: ${step.title}`, ...step })) } });
const systemOf = (request: ReceivedRequest) => messageText(request.messages[0]);

describe('the planning flow', () => {
  it('runs each plan step with the executor the plan names, then the planner answers from the results', async () => {
    const { result, model, events } = await runPlanned([
      planReply([{ title: 'Find facts', executor: 'researcher' }, { title: 'Write it up' }]),
      terminateReply('Owls hunt at night.'),
      terminateReply('A page about owls.'),
      terminateReply('Owls: they hunt at night.'),
    ]);
    expect(result.status, result.answer).toBe('success');
    expect(result.answer).toBe('Owls: they hunt at night.');
    expect(model.requests.map(systemOf)).toEqual([expect.stringContaining('planner'), 'You research.', 'You write.', expect.stringContaining('planner')]);
    // The second executor sees the plan with the first step's result.
    expect(messageText(model.requests[2].messages[1])).toContain('Owls hunt at night.');
    expect(events.filter((event) => event.type === 'flow-step-end').map((event) => [event.path, event.status])).toEqual([
      ['work/plan', 'success'], ['work/1', 'success'], ['work/2', 'success'], ['work/answer', 'success'], ['work', 'success'],
    ]);
    const planFile = readFileSync(join(result.runDirectory, 'plan-work.md'), 'utf8');
    expect(planFile).toMatch(/Find facts[\s\S]*researcher/);
    expect(planFile).toMatch(/Write it up[\s\S]*writer/);
  });

  it('asks the planner to revise the rest of the plan when a step fails, instead of marking it done', async () => {
    const { result, model, events } = await runPlanned([
      planReply([{ title: 'Find facts', executor: 'researcher' }, { title: 'Write it up' }]),
      terminateReply('no sources reachable', 'failure'),
      planReply([{ title: 'Write from memory', executor: 'writer' }]),
      terminateReply('A page from memory.'),
      terminateReply('Owls, from memory.'),
    ]);
    expect(result.status, result.answer).toBe('success');
    expect(messageText(model.requests[2].messages[1])).toContain('no sources reachable');
    const ends = events.filter((event) => event.type === 'flow-step-end').map((event) => [event.path, event.status]);
    expect(ends).toEqual(expect.arrayContaining([['work/1', 'failure'], ['work/replan-1', 'success'], ['work', 'success']]));
    const planFile = readFileSync(join(result.runDirectory, 'plan-work.md'), 'utf8');
    expect(planFile).toContain('no sources reachable');
    expect(planFile).toContain('Write from memory');
  });

  it('fails the flow when a step fails after as many revisions as max_replans allows', async () => {
    const { result } = await runPlanned([
      planReply([{ title: 'Find facts', executor: 'researcher' }]),
      terminateReply('blocked', 'failure'),
      planReply([{ title: 'Try again', executor: 'researcher' }]),
      terminateReply('blocked again', 'failure'),
    ]);
    expect(result.status).toBe('failure');
    expect(result.answer).toContain('max_replans');
  });
});
