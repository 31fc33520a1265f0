/**
 * A tool calling another through `context.callTool`, as a plugin family builds on another without
 * importing its files: the called tool loads with its caller though no agent lists it, and runs as
 * the model's call would (schema, settings, the run's permissions), its approval asked for under
 * the model's call, so `manus resume --approve` that call approves what it leads to.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../runtime/contract/errors.js';
import { eventsOfType, useInProcessRuns } from './support/in-process-loop.js';
import { callReply, terminateReply, type ReceivedRequest } from './support/scripted-chat-model.js';
import { readEvents, runCli } from './support/run-cli.js';
import { terminate, toolMessages, writeLoopFixture } from './support/loop-fixture.js';
import { withScriptedModelServer as withServer, type RecordedChatRequest, type ScriptedModelServer } from './support/scripted-model-server.js';

const run = useInProcessRuns();

/** Tools that call the test tools (`echo`, `write_note`) and each other. */
const callers = `export default [
  {
    name: 'relay',
    description: 'Relays text through echo.',
    calls: ['echo'],
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    async execute({ text }, context) {
      const result = await context.callTool('echo', text === 'not text' ? { text: 42 } : { text });
      return \`\${result.isError ? 'relay failed' : 'relayed'}: \${result.content}\`;
    },
  },
  {
    name: 'stowaway',
    description: 'Calls a tool it does not list in calls.',
    calls: ['echo'],
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async execute(_input, context) {
      await context.callTool('write_note', { path: 'planted.txt', text: 'planted' });
      return 'wrote it';
    },
  },
  {
    name: 'counter',
    description: 'Counts words; the count is data too.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    execute: ({ text }, context) => ({ content: \`\${text.split(' ').length} words (limit \${context.settings.limit})\`, data: { words: text.split(' ').length } }),
  },
  {
    name: 'measure',
    description: 'Measures text with counter.',
    calls: ['counter'],
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    async execute({ text }, context) {
      const result = await context.callTool('counter', { text });
      return \`the data says \${result.data.words}; the text says \${result.content}\`;
    },
  },
  {
    name: 'loop_a',
    description: 'Calls loop_b, which calls it back.',
    calls: ['loop_b'],
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: async (_input, context) => (await context.callTool('loop_b', {})).content,
  },
  {
    name: 'loop_b',
    description: 'Calls loop_a, which calls it back.',
    calls: ['loop_a'],
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: async (_input, context) => (await context.callTool('loop_a', {})).content,
  },
];
`;

const files = { 'plugins/callers.mjs': callers };

function toolResults(request: ReceivedRequest): string[] {
  return request.messages.flatMap((message) => (message.role === 'tool' ? [message.content] : []));
}

describe('a tool calling a tool', () => {
  it('runs the called tool, which the model is not offered, and records the nested call', async () => {
    const { result, model, events } = await run([callReply('relay', { text: 'hello' }), terminateReply()], { tools: ['relay', 'terminate'], files });
    expect(result.status).toBe('success');
    expect(model.requests[0].toolNames).toEqual(['relay', 'terminate']);
    expect(toolResults(model.requests[1])).toEqual(['relayed: echo: hello']);
    expect(eventsOfType(events, 'tool-call-nested')).toMatchObject([{ step: 1, callId: 'call_1:echo:1', parentCallId: 'call_1', tool: 'echo', arguments: { text: 'hello' }, isError: false }]);
    expect(eventsOfType(events, 'tool-call-start').map((event) => event.tool)).toEqual(['relay', 'terminate']);
  });

  it('gives the caller the result as data, and the called tool its own settings', async () => {
    const { model } = await run([callReply('measure', { text: 'one two three' }), terminateReply()], {
      tools: ['measure', 'terminate'],
      files,
      recipe: 'tool_settings:\n  counter: { limit: 9 }\n  measure: { limit: 1 }',
    });
    expect(toolResults(model.requests[1])).toEqual(['the data says 3; the text says 3 words (limit 9)']);
  });

  it('checks the arguments against the called tool\'s schema before it runs', async () => {
    const { model, events } = await run([callReply('relay', { text: 'not text' }), terminateReply()], { tools: ['relay', 'terminate'], files });
    const [text] = toolResults(model.requests[1]);
    expect(text).toContain("relay failed: Invalid arguments for 'echo'");
    expect(eventsOfType(events, 'tool-call-nested')).toMatchObject([{ tool: 'echo', isError: true }]);
  });

  it('holds the run\'s rules for the called tool: a denial comes back to the caller as an error result', async () => {
    const { model, events } = await run([callReply('relay', { text: 'hello' }), terminateReply()], {
      tools: ['relay', 'terminate'],
      files,
      agent: 'permissions: { deny: ["echo(text=hel*)"] }',
    });
    expect(toolResults(model.requests[1])[0]).toMatch(/^relay failed: Permission denied: .*echo/);
    expect(eventsOfType(events, 'permission-decided')).toMatchObject([{ callId: 'call_1:echo:1', tool: 'echo', decision: 'deny', by: 'rules' }]);
  });

  it('holds a rule of the user\'s own config for the called tool too', async () => {
    const { model } = await run([callReply('relay', { text: 'hello' }), terminateReply()], {
      tools: ['relay', 'terminate'],
      files,
      userConfig: 'version: 1\npermissions:\n  deny: [echo]\n',
    });
    expect(toolResults(model.requests[1])[0]).toMatch(/^relay failed: Permission denied: your config denies echo/);
  });

  it('refuses a call to a tool the caller does not list in calls, even one the run offers', async () => {
    const { model, result } = await run([callReply('stowaway'), terminateReply()], { tools: ['stowaway', 'write_note', 'terminate'], files });
    expect(toolResults(model.requests[1])[0]).toBe("Error: the tool 'stowaway' cannot call 'write_note': it may call only the tools its 'calls' lists (echo)");
    expect(result.files).toEqual([]);
  });

  it('ends tools that call each other in a cycle at a fixed depth', async () => {
    const { model } = await run([callReply('loop_a'), terminateReply()], { tools: ['loop_a', 'terminate'], files });
    expect(toolResults(model.requests[1])[0]).toContain('tools calling tools nest at most 4 deep');
  });

  it('stops before the first model call when a listed tool calls a tool no plugin defines', async () => {
    const broken = { 'plugins/broken.mjs': "export default { name: 'asks_ghost', description: 'x', calls: ['ghost_tool'], parameters: { type: 'object' }, execute: () => 'x' };\n" };
    const failure = await run([terminateReply()], { tools: ['asks_ghost', 'terminate'], files: broken }).catch((error: unknown) => error);
    expect(ConfigError.isInstance(failure)).toBe(true);
    expect(String((failure as Error).message)).toContain("lists the tool 'asks_ghost', which calls the tool 'ghost_tool', but no plugin of the run defines it");
  });

  it('refuses a plugin whose calls is not a list of tool names', async () => {
    const broken = { 'plugins/broken.mjs': "export default { name: 'odd', description: 'x', calls: 'echo', parameters: { type: 'object' }, execute: () => 'x' };\n" };
    const failure = await run([terminateReply()], { tools: ['odd', 'terminate'], files: broken }).catch((error: unknown) => error);
    expect(String((failure as Error).message)).toContain("tool 'odd': 'calls' must be a list of tool names");
  });
});

describe('an approval a called tool needs', () => {
  const environment = (server: ScriptedModelServer) => ({ OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' });
  const chatRequests = (server: ScriptedModelServer) => server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];

  it('is asked for under the model\'s call, and resume --approve that call runs both', async () => {
    const fixture = writeLoopFixture({ tools: ['relay', 'terminate'], agentExtra: 'permissions: { ask: [echo] }' });
    mkdirSync(join(fixture, 'plugins'), { recursive: true });
    writeFileSync(join(fixture, 'plugins', 'callers.mjs'), callers);
    const runId = await withServer([{ toolCalls: [{ name: 'relay', arguments: { text: 'guarded' } }] }], async (server) => {
      const stopped = await runCli(['run', 'recipe.yaml', '--json', '--ci'], { cwd: fixture, env: environment(server) });
      expect(stopped.exitCode, stopped.stderr).toBe(5);
      expect(stopped.json).toMatchObject({ status: 'needs-input', error: { code: 'approval_needed' } });
      const needed = readEvents(stopped.json.runDirectory).filter((event) => event.type === 'permission-needed');
      expect(needed).toMatchObject([{ callId: 'call_0_0', tool: 'echo', arguments: { text: 'guarded' } }]);
      return stopped.json.runId as string;
    });
    await withServer([terminate('finished')], async (server) => {
      const resumed = await runCli(['resume', runId, '--approve', 'call_0_0', '--json', '--ci'], { cwd: fixture, env: environment(server) });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(toolMessages(chatRequests(server)[0]).map((message) => message.content)).toEqual(['relayed: echo: guarded']);
      const decided = readEvents(resumed.json.runDirectory).filter((event) => event.type === 'permission-decided');
      expect(decided.map((event) => [event.callId, event.tool, event.decision, event.by])).toEqual([['call_0_0:echo:1', 'echo', 'allow', 'resume']]);
    });
  });
});
