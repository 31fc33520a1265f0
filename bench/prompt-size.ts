/**
 * What each shipped agent sends before the task: the tool definitions, the system prompt and the
 * next-step prompt of its first request, in characters and in tokens (tiktoken, o200k). The request
 * is the real one: the built command runs each agent against a scripted model that records it.
 */
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { get_encoding } from 'tiktoken';
import { runCli } from '../test/support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest } from '../test/support/scripted-model-server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const agents = Object.keys((parse(readFileSync(join(root, 'agents.yaml'), 'utf8')) as { agents: Record<string, unknown> }).agents);
const encoding = get_encoding('o200k_base');
const tokens = (text: string) => encoding.encode(text).length;

interface Row {
  agent: string;
  tools: number;
  toolsCharacters: number;
  toolsTokens: number;
  systemCharacters: number;
  systemTokens: number;
  nextStepCharacters: number;
  nextStepTokens: number;
}

async function firstRequest(agent: string): Promise<RecordedChatRequest> {
  const server = await startScriptedModelServer({ turns: [{ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] }] });
  try {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), 'manus-prompt-size-')));
    writeFileSync(join(folder, 'recipe.yaml'), `version: 1\nname: size\nprompt: "-"\nagent: ${agent}\n`);
    const result = await runCli(['run', join(folder, 'recipe.yaml'), '--workspace', folder], {
      cwd: folder,
      env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'bench', MANUS_MODEL: 'scripted-model' },
    });
    const request = server.requests.find((each) => each.path.endsWith('/chat/completions')) as RecordedChatRequest | undefined;
    if (!request) throw new Error(`agent ${agent} sent no request: ${result.stderr}`);
    return request;
  } finally {
    await server.close();
  }
}

const rows: Row[] = [];
for (const agent of agents) {
  const request = await firstRequest(agent);
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  const text = (message: { content: unknown } | undefined) => (typeof message?.content === 'string' ? message.content : '');
  const toolsJson = JSON.stringify(request.body.tools ?? []);
  const system = text(messages[0]);
  // After the system prompt and the task come this step's own messages: the next-step prompt.
  const nextStep = messages.slice(2).map(text).join('\n');
  rows.push({
    agent,
    tools: request.body.tools?.length ?? 0,
    toolsCharacters: toolsJson.length,
    toolsTokens: tokens(toolsJson),
    systemCharacters: system.length,
    systemTokens: tokens(system),
    nextStepCharacters: nextStep.length,
    nextStepTokens: tokens(nextStep),
  });
}
encoding.free();

console.log('| agent | tools | tool text (chars / tokens) | system prompt | next-step prompt | first request in all |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const row of rows) {
  const all = row.toolsCharacters + row.systemCharacters + row.nextStepCharacters;
  const allTokens = row.toolsTokens + row.systemTokens + row.nextStepTokens;
  console.log(`| ${row.agent} | ${row.tools} | ${row.toolsCharacters} / ${row.toolsTokens} | ${row.systemCharacters} / ${row.systemTokens} | ${row.nextStepCharacters} / ${row.nextStepTokens} | ${all} / ${allTokens} |`);
}
const manus = rows.find((row) => row.agent === 'manus');
if (manus && process.argv.includes('--check')) {
  const limit = 6300;
  const ok = manus.toolsCharacters <= limit;
  console.log(`manus tool text: ${manus.toolsCharacters} characters, limit ${limit}: ${ok ? 'ok' : 'over'}`);
  if (!ok) process.exitCode = 1;
}
