/**
 * The files `manus pack init <name>` writes: a package.json with a "manus" field, a recipe, an
 * agent, a tool plugin, and a test that runs the recipe through the `manus` command against a
 * scripted OpenAI-compatible model on loopback, so the pack is checked without a real model.
 */

export function packScaffold(name: string, runtimeVersion: string): Record<string, string> {
  const manifest = {
    name,
    version: '0.1.0',
    description: 'A manus-runtime pack: a recipe, its agent and its tool.',
    type: 'module',
    keywords: ['manus-pack'],
    files: ['recipes', 'agents.yaml', 'plugins', 'README.md'],
    manus: { recipes: 'recipes', agents: 'agents.yaml', plugins: 'plugins' },
    scripts: { test: 'node --test test/' },
    // Optional: installing the pack never pulls a second runtime into a project that has one.
    peerDependencies: { 'manus-runtime': `>=${runtimeVersion}` },
    peerDependenciesMeta: { 'manus-runtime': { optional: true } },
  };
  return {
    'package.json': `${JSON.stringify(manifest, null, 2)}\n`,
    'agents.yaml': agentsYaml,
    'recipes/hello.yaml': recipeYaml,
    'plugins/greet.ts': pluginSource,
    'test/hello.test.mjs': testSource,
    'README.md': readme(name),
  };
}

const agentsYaml = `version: 1
agents:
  greeter:
    description: Greets people by name with the pack's greet tool.
    system_prompt: |
      You greet people. Greet each person with the greet tool, then call terminate with status
      success and the greeting as the message.
    tools: [greet, terminate]
    max_steps: 5
`;

const recipeYaml = `version: 1
name: hello
description: Greet someone with the pack's greet tool.
parameters:
  name:
    type: string
    description: Who to greet.
    default: world
prompt: Greet {{name}}.
agent: greeter
budgets:
  steps: 5
# Checked after the agent finishes: answer_matches is a regular expression the final answer must
# contain a match for (the other kinds check a file, a command's exit status or the response schema).
checks:
  - answer_matches: "^Hello, "
    name: the answer is a greeting
`;

const pluginSource = `import { defineTool } from 'manus-runtime';

export default defineTool({
  name: 'greet',
  description: 'Greets someone by name.',
  parameters: {
    type: 'object',
    properties: { name: { type: 'string', description: 'Who to greet.' } },
    required: ['name'],
    additionalProperties: false,
  },
  async execute(input) {
    return \`Hello, \${String(input.name)}!\`;
  },
});
`;

const testSource = `// Runs the recipe through the manus command against a scripted OpenAI-compatible model on
// loopback. The command is MANUS_BIN when set, else the runtime installed in this pack, else manus
// on PATH.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

const recipe = fileURLToPath(new URL('../recipes/hello.yaml', import.meta.url));
const turns = [
  { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'greet', arguments: JSON.stringify({ name: 'Ada' }) } }] },
  { tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'terminate', arguments: JSON.stringify({ status: 'success', message: 'Hello, Ada!' }) } }] },
];
const requests = [];
let server;
let baseUrl;

before(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const parsed = JSON.parse(body || '{}');
      requests.push(parsed);
      const message = { role: 'assistant', content: null, ...turns[Math.min(requests.length - 1, turns.length - 1)] };
      if (!parsed.stream) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ id: 'scripted', object: 'chat.completion', created: 0, model: 'scripted', choices: [{ index: 0, message, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
        return;
      }
      const chunk = (delta, finish) => 'data: ' + JSON.stringify({ id: 'scripted', object: 'chat.completion.chunk', created: 0, model: 'scripted', choices: [{ index: 0, delta, finish_reason: finish }] }) + '\\n\\n';
      const calls = message.tool_calls.map((call, index) => ({ index, ...call }));
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(chunk({ role: 'assistant', tool_calls: calls }, null) + chunk({}, 'tool_calls') + 'data: [DONE]\\n\\n');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = \`http://127.0.0.1:\${server.address().port}/v1\`;
});

after(() => server.close());

test('the hello recipe greets with the pack\\'s own tool', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'pack-test-'));
  try {
    const result = await runManus(['run', recipe, '--param', 'name=Ada', '--json', '--quiet'], folder);
    assert.equal(result.code, 0, result.stderr);
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.answer, 'Hello, Ada!');
    // The tool's result went back to the model: the plugin ran.
    const toolResult = requests[1].messages.find((message) => message.role === 'tool');
    assert.match(String(toolResult.content), /Hello, Ada!/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

function manusCommand() {
  if (process.env.MANUS_BIN) return [process.env.MANUS_BIN];
  let manifestFile;
  try {
    manifestFile = createRequire(import.meta.url).resolve('manus-runtime/package.json');
  } catch {
    return ['manus'];
  }
  const { bin } = JSON.parse(readFileSync(manifestFile, 'utf8'));
  return [process.execPath, join(dirname(manifestFile), typeof bin === 'string' ? bin : bin.manus)];
}

function runManus(args, cwd) {
  const [command, ...start] = manusCommand();
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...start, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, OPENAI_BASE_URL: baseUrl, MANUS_MODEL: 'scripted', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', (error) => reject(error.code === 'ENOENT'
      ? new Error(\`no \${command} command: install the runtime into this pack (npm install --save-dev with its tarball or git URL), or put manus on PATH, or set MANUS_BIN\`)
      : error));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
`;

function readme(name: string): string {
  return `# ${name}

A manus-runtime pack: recipes in \`recipes/\`, their agents in \`agents.yaml\` and tool plugins in
\`plugins/\`, named by the \`"manus"\` field of package.json. In a project that has manus-runtime
installed:

\`\`\`sh
npm install ${name}
npx --no-install manus inspect ${name}       # what its recipes use and start, before anything runs
npx --no-install manus run ${name}/hello --param name=Ada
\`\`\`

(Without the runtime installed, npx without \`--no-install\` would fetch an unrelated package named
\`manus\`.)

## Developing it

Install the runtime into the pack for its test, from a tarball made with \`npm pack\` in a
manus-runtime checkout, or from a git URL:

\`\`\`sh
npm install --save-dev ../manus-runtime/manus-runtime-<version>.tgz
npm test                                     # runs the recipe against a scripted model on loopback
npx --no-install manus validate .
\`\`\`

The test runs the command MANUS_BIN names when it is set, else the runtime installed here, else
\`manus\` on PATH.

The recipe's \`checks:\` run after the agent finishes; \`answer_matches\` is a regular expression
(JavaScript syntax) the final answer must contain a match for, \`^\` and \`$\` matching at line ends.
`;
}
