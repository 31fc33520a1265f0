/**
 * A flow killed with SIGKILL in the middle of a fan-out, then resumed through the built command:
 * the steps and branches that finished are not asked again, the branch that was waiting for the
 * model goes on from its own history, and the steps after the fan-out run once.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEntry, makeFixture, readEvents, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

const tools = `import { defineTool } from 'manus-runtime';

export default defineTool({
  name: 'note',
  description: 'Notes a finding and returns it.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: ({ text }) => \`noted: \${text}\`,
});
`;

const agentsYaml = `version: 1
llm:
  default: { provider: openai-compatible, retry: { base_delay_ms: 5, max_delay_ms: 50 } }
agents:
  researcher:
    description: Researches one topic.
    system_prompt: You research one topic.
    tools: [note, terminate]
  writer:
    description: Writes the report.
    system_prompt: You write reports.
    tools: [terminate]
`;

const recipe = `version: 1
name: killed-flow
plugins: [./tools]
parameters:
  topics: { type: list }
flow:
  - name: research
    kind: parallel
    for_each: "{{topics}}"
    max_concurrency: 2
    step: { kind: agent, agent: researcher, prompt: "Research: {{item}}" }
  - name: report
    kind: agent
    agent: writer
    prompt: "Report on: {{steps.research.answers}}"
`;

const terminate = (message: string): ScriptedTurn => ({ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message } }] });
const note = (text: string): ScriptedTurn => ({ toolCalls: [{ name: 'note', arguments: { text } }] });

function chatRequests(server: ScriptedModelServer): RecordedChatRequest[] {
  return server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
}

function messagesOf(request: RecordedChatRequest): Array<{ role: string; content?: unknown }> {
  return request.body.messages as Array<{ role: string; content?: unknown }>;
}

function userText(request: RecordedChatRequest): string {
  return messagesOf(request).filter((message) => message.role === 'user').map((message) => String(message.content)).join('\n');
}

const lastIsToolResult = (request: RecordedChatRequest) => messagesOf(request).at(-1)?.role === 'tool';

/**
 * Answers each request by what it is about, whatever order the branches ask in: a branch notes
 * once, then terminates; with `stallOn`, that topic's second request is never answered.
 */
function answering(stallOn?: string) {
  return (request: RecordedChatRequest): ScriptedTurn => {
    const text = userText(request);
    const topic = /Research: (\w+)/.exec(text)?.[1];
    if (topic === undefined) return terminate('the report');
    if (!lastIsToolResult(request)) return note(`${topic} fact`);
    if (topic === stallOn) return { delayMs: 60_000, content: 'never arrives' };
    return terminate(`about ${topic}`);
  };
}

describe('a flow killed mid-step', () => {
  it('resumes from the branch that was running, and runs what finished only once', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe, 'agents.yaml': agentsYaml, 'tools/note.ts': tools });
    const first = await startScriptedModelServer({ turns: [], sideTurn: answering('bats') });
    let runId: string;
    try {
      const child = spawn(process.execPath, [cliEntry, 'run', 'recipe.yaml', '--param', 'topics=owls,bats', '--json'], {
        cwd: fixture,
        env: { PATH: process.env.PATH, OPENAI_BASE_URL: first.baseUrl, MANUS_MODEL: 'scripted-model', NO_COLOR: '1', XDG_CONFIG_HOME: `${fixture}/no-user-config` },
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      // Killed once owls's end is recorded and bats waits for the reply to its note.
      const poll = setInterval(() => {
        const id = /run (\d{8}-\d{6}-[0-9a-f]{6})/.exec(stderr)?.[1];
        const eventsFile = join(fixture, '.manus', 'runs', id ?? '-', 'events.jsonl');
        const owlsDone = id !== undefined && existsSync(eventsFile) && /"type":"flow-step-end"[^\n]*"path":"research\/owls"|"path":"research\/owls"[^\n]*"type":"flow-step-end"/.test(readFileSync(eventsFile, 'utf8'));
        const batsWaiting = chatRequests(first).some((request) => userText(request).includes('Research: bats') && lastIsToolResult(request));
        if (owlsDone && batsWaiting) child.kill('SIGKILL');
      }, 20);
      const signal = await new Promise((resolve) => child.on('close', (_code, killSignal) => resolve(killSignal)));
      clearInterval(poll);
      expect(signal, stderr).toBe('SIGKILL');
      runId = /run (\d{8}-\d{6}-[0-9a-f]{6})/.exec(stderr)![1];
    } finally {
      await first.close();
    }

    const second = await startScriptedModelServer({ turns: [], sideTurn: answering() });
    try {
      const resumed = await runCli(['resume', runId, '--json'], { cwd: fixture, env: { OPENAI_BASE_URL: second.baseUrl, MANUS_MODEL: 'scripted-model', XDG_CONFIG_HOME: `${fixture}/no-user-config` } });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(resumed.json).toMatchObject({ runId, status: 'success', answer: 'the report' });

      const requests = chatRequests(second);
      // bats asked once more, with its note's result in its history; owls not at all.
      expect(requests.map((request) => /Research: (\w+)|Report on/.exec(userText(request))?.[0])).toEqual(['Research: bats', 'Report on']);
      const bats = messagesOf(requests[0]);
      expect(bats.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('noted: bats fact') });
      expect(bats.filter((message) => message.role === 'assistant')).toHaveLength(1);
      expect(userText(requests[1])).toContain('"about owls",\n  "about bats"');

      const flowSteps = resumed.json.flowSteps as Array<{ path: string; status: string }>;
      expect(Object.fromEntries(flowSteps.map((step) => [step.path, step.status]))).toMatchObject({
        'research/owls': 'success',
        'research/bats': 'success',
        research: 'success',
        report: 'success',
      });
      // One events file for the whole run: every step of both processes, each tagged by its path.
      const events = readEvents(resumed.json.runDirectory);
      const ended = events.filter((event) => event.type === 'flow-step-end').map((event) => event.path);
      expect(ended.filter((path) => path === 'research/owls')).toHaveLength(1);
      expect(ended.filter((path) => path === 'report')).toHaveLength(1);
      expect(events.filter((event) => event.type === 'run-start')).toHaveLength(1);

      const shown = await runCli(['runs', 'show', runId], { cwd: fixture });
      expect(shown.exitCode, shown.stderr).toBe(0);
      // The flow as a tree, once, before the end; the resumed branch's steps are headed by its path.
      const tree = shown.stdout.slice(shown.stdout.indexOf('\nFlow:\n'), shown.stdout.lastIndexOf('\nEnd: '));
      expect(tree).toMatch(/^\nFlow:\n  research \(parallel\): success, 4 steps, [\d,]+ tokens, .+\n    owls \(agent researcher\): success, 2 steps, .+\n    bats \(agent researcher\): success, 2 steps, .+\n  report \(agent writer\): success, 1 step, .+\n$/);
      expect(shown.stdout.match(/\nFlow:\n/g)).toHaveLength(1);
      expect(shown.stdout).toContain('\nresearch/bats, step 2\n  > terminate');
    } finally {
      await second.close();
    }
  });
});
