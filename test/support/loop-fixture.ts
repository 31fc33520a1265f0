import { runCli, makeFixture, type CliResult } from './run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedModelServer, type ScriptedTurn } from './scripted-model-server.js';

/** Test tools, written as a user would: a plain `.ts` plugin file importing 'manus-runtime'. */
const testTools = `import { defineTool } from 'manus-runtime';

const started: Record<string, number> = {};

export default [
  defineTool<{ text: string }>({
    name: 'echo',
    description: 'Returns the text it is given.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    execute: ({ text }) => \`echo: \${text}\`,
  }),
  defineTool<{ label: string; milliseconds: number }>({
    name: 'wait',
    description: 'Waits, then reports when it started and ended.',
    parameters: {
      type: 'object',
      properties: { label: { type: 'string' }, milliseconds: { type: 'integer' } },
      required: ['label', 'milliseconds'],
    },
    async execute({ label, milliseconds }) {
      started[label] = Date.now();
      await new Promise((resolve) => setTimeout(resolve, milliseconds));
      return \`\${label} started=\${started[label]} ended=\${Date.now()}\`;
    },
  }),
  defineTool<{ characters: number }>({
    name: 'big_output',
    description: 'Returns a long text: HEAD, many x, TAIL.',
    parameters: { type: 'object', properties: { characters: { type: 'integer' } }, required: ['characters'] },
    execute: ({ characters }) => 'HEAD' + 'x'.repeat(characters) + 'TAIL',
  }),
  defineTool<Record<string, never>>({
    name: 'fail',
    description: 'Always fails.',
    parameters: { type: 'object', properties: {} },
    execute() {
      throw new Error('the disk is on fire');
    },
  }),
  defineTool<Record<string, never>>({
    name: 'snapshot',
    description: 'Returns a tiny image.',
    parameters: { type: 'object', properties: {} },
    execute: () => ({ content: 'took a snapshot', images: [{ data: 'iVBORw0KGgo=', mimeType: 'image/png' }] }),
  }),
  defineTool<{ name: string }>({
    name: 'read_env',
    description: 'Returns an environment variable (to test redaction).',
    parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    execute: ({ name }) => \`value=\${process.env[name] ?? ''}\`,
  }),
];
`;

export interface LoopFixtureOptions {
  /** Extra recipe keys as YAML text, appended at the top level. */
  recipeExtra?: string;
  /** Extra inline agent keys as YAML text (indented by the fixture). */
  agentExtra?: string;
  tools?: string[];
  /** A profile for agents.yaml beside the recipe, as YAML text under `llm.default`. */
  profile?: string;
  prompt?: string;
  /** The whole agents.yaml beside the recipe, replacing the one built from `profile`. */
  agentsYaml?: string;
}

export function writeLoopFixture(options: LoopFixtureOptions = {}): string {
  const agentExtra = (options.agentExtra ?? '').split('\n').filter(Boolean).map((line) => `  ${line}`).join('\n');
  const recipe = [
    'version: 1',
    'name: loop-test',
    `prompt: ${JSON.stringify(options.prompt ?? 'Do the task.')}`,
    'plugins: [./tools]',
    'agent:',
    '  system_prompt: You are a test agent.',
    `  tools: [${(options.tools ?? ['echo', 'wait', 'big_output', 'fail', 'read_env', 'terminate']).join(', ')}]`,
    agentExtra,
    options.recipeExtra ?? '',
    '',
  ].filter((line) => line !== '').join('\n');
  const profile = (options.profile ?? 'retry: { base_delay_ms: 5, max_delay_ms: 50 }').split('\n').map((line) => `    ${line}`).join('\n');
  return makeFixture({
    'recipe.yaml': `${recipe}\n`,
    'tools/test-tools.ts': testTools,
    'agents.yaml': options.agentsYaml ?? `version: 1\nllm:\n  default:\n${profile}\n`,
  });
}

export interface ScriptedRun extends CliResult {
  server: ScriptedModelServer;
  requests: RecordedChatRequest[];
  fixture: string;
}

/** Runs the fixture's recipe through the CLI against a scripted model. */
export async function runScripted(
  turns: ScriptedTurn[],
  options: LoopFixtureOptions & { args?: string[]; env?: Record<string, string | undefined>; fixture?: string } = {},
): Promise<ScriptedRun> {
  const fixture = options.fixture ?? writeLoopFixture(options);
  const server = await startScriptedModelServer({ turns });
  try {
    const result = await runCli(['run', 'recipe.yaml', '--json', ...(options.args ?? [])], {
      cwd: fixture,
      env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model', ...options.env },
    });
    const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
    return { ...result, server, requests, fixture };
  } finally {
    await server.close();
  }
}

export function terminate(message = 'done', status: 'success' | 'failure' = 'success'): ScriptedTurn {
  return { toolCalls: [{ name: 'terminate', arguments: { status, message } }] };
}

/** The tool messages the model was sent in a request, by call id. */
export function toolMessages(request: RecordedChatRequest): Array<{ tool_call_id: string; content: string }> {
  return (request.body.messages as Array<{ role: string; tool_call_id: string; content: string }>).filter((message) => message.role === 'tool');
}
