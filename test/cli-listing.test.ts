import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot, runCli } from './support/run-cli.js';

const builtInPluginFolder = join(repositoryRoot, 'plugins');
// Each family folder's index defines its tools; the kernel defines terminate itself.
const builtInPluginFiles = [
  ...readdirSync(builtInPluginFolder).map((name) => join(builtInPluginFolder, name, 'index.ts')),
  'the runtime',
];

const packageAgents = join(repositoryRoot, 'agents.yaml');

const shippedAgents = {
  assistant: ['terminate'],
  manus: ['python_execute', 'web_search', 'web_fetch', 'browser_use', 'extract_content', 'str_replace_editor', 'file_search', 'list_files', 'planning', 'ask_human', 'terminate'],
  browser: ['browser_use', 'web_search', 'extract_content', 'terminate'],
  swe: ['bash', 'str_replace_editor', 'file_search', 'list_files', 'terminate'],
  data_analysis: ['python_execute', 'chart_visualization', 'str_replace_editor', 'list_files', 'file_search', 'terminate'],
  planner: ['terminate'],
};

const echoPlugin = `import { defineTool } from 'manus-runtime';
export default defineTool({
  name: 'echo_text',
  description: 'Repeats a text.\\nA second line that the listing leaves out.',
  parameters: { type: 'object', properties: { text: { type: 'string' }, times: { type: 'integer' } }, required: ['text'] },
  execute: ({ text }: { text: string }) => text,
});
`;

function uniqueSorted(values: string[]): string[] {
  return [...new Set(values)].sort();
}

interface ListedTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  file: string;
}

interface ListedAgent {
  name: string;
  description: string;
  tools: string[];
  llm: string;
  maxSteps: number;
  file: string;
}

describe('manus tools', () => {
  it('lists every built-in tool with its parameter schema and file, sorted by name', async () => {
    const result = await runCli(['tools', '--json'], { cwd: makeFixture({}) });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const tools = result.json as ListedTool[];
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual([...names].sort((left, right) => left.localeCompare(right)));
    expect(uniqueSorted(tools.map((tool) => tool.file))).toEqual(uniqueSorted(builtInPluginFiles));
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(0);
      expect(tool.parameters.type).toBe('object');
    }
    expect(tools.find((tool) => tool.name === 'terminate')).toEqual({
      name: 'terminate',
      description: expect.stringContaining('Finish the task'),
      parameters: {
        type: 'object',
        properties: {
          status: { type: 'string', enum: ['success', 'failure'] },
          message: { type: 'string', description: 'The answer, or why the task cannot be done.' },
        },
        required: ['status'],
        additionalProperties: false,
      },
      file: 'the runtime',
    });
  });

  it('adds the tools of a folder given with --plugins', async () => {
    const fixture = makeFixture({ 'extra/echo.ts': echoPlugin });
    const result = await runCli(['tools', '--plugins', 'extra', '--json'], { cwd: fixture });
    expect(result.exitCode).toBe(0);
    const tools = result.json as ListedTool[];
    expect(tools.filter((tool) => tool.file.startsWith(fixture))).toHaveLength(1);
    expect(tools.find((tool) => tool.name === 'echo_text')).toEqual({
      name: 'echo_text',
      description: 'Repeats a text.\nA second line that the listing leaves out.',
      parameters: { type: 'object', properties: { text: { type: 'string' }, times: { type: 'integer' } }, required: ['text'] },
      file: join(fixture, 'extra', 'echo.ts'),
    });
  });

  it('prints a signature, the first description line, one line per parameter and the relative file for each tool', async () => {
    const fixture = makeFixture({ 'extra/echo.ts': echoPlugin });
    const result = await runCli(['tools', '--plugins', 'extra'], { cwd: fixture });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('echo_text(text, times?)\n  Repeats a text.\n    text (string, required)\n    times (integer)\n  extra/echo.ts\n');
    expect(result.stdout).toContain(
      'terminate(status, message?)\n  Finish the task, with the final answer for the user in "message".',
    );
    expect(result.stdout).toContain(
      '    status ("success" | "failure", required)\n' +
      '    message (string): The answer, or why the task cannot be done.\n',
    );
    expect(result.stdout).not.toContain('A second line');
  });

  it('wraps long descriptions at word boundaries, never cutting a word', async () => {
    const result = await runCli(['tools', '--json'], { cwd: makeFixture({}) });
    const words = new Set((result.json as ListedTool[]).flatMap((tool) => [
      ...tool.description.split('\n')[0].split(/\s+/),
      ...Object.values((tool.parameters.properties ?? {}) as Record<string, { description?: string }>).flatMap((schema) => (schema.description ?? '').split(/\s+/)),
    ]).filter(Boolean));
    const text = await runCli(['tools'], { cwd: makeFixture({}) });
    const bash = text.stdout.slice(text.stdout.indexOf('bash('), text.stdout.indexOf('browser_use('));
    const lines = bash.split('\n').filter((line) => line.startsWith('  ') && !line.includes('plugins/'));
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) {
      expect(line.length).toBeLessThanOrEqual(100);
      const [first] = line.trim().split(' ');
      const last = line.trim().split(' ').at(-1)!;
      // Every line starts and ends on a whole word of a description (or a parameter's own heading).
      expect(words.has(last) || /\)$/.test(last)).toBe(true);
      expect(words.has(first) || /^[a-z_]+$/.test(first)).toBe(true);
    }
  });

  it('also loads the plugins folder of the current directory', async () => {
    const fixture = makeFixture({ 'plugins/echo.ts': echoPlugin });
    const result = await runCli(['tools', '--json'], { cwd: fixture });
    expect(result.exitCode).toBe(0);
    expect((result.json as ListedTool[]).map((tool) => tool.name)).toContain('echo_text');
  });

  it('reports a --plugins folder that does not exist and exits 2', async () => {
    const result = await runCli(['tools', '--plugins', 'nowhere', '--json'], { cwd: makeFixture({}) });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('error: plugin folder not found: nowhere');
    expect(uniqueSorted((result.json as ListedTool[]).map((tool) => tool.file))).toEqual(uniqueSorted(builtInPluginFiles));
  });
});

describe('manus agents', () => {
  it('lists the shipped agents with their tools as JSON', async () => {
    const result = await runCli(['agents', '--json'], { cwd: makeFixture({}) });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const agents = result.json as ListedAgent[];
    expect(Object.fromEntries(agents.map((agent) => [agent.name, agent.tools]))).toEqual(shippedAgents);
    for (const agent of agents) {
      expect(agent.description.length).toBeGreaterThan(0);
      expect(agent.llm).toBe('default');
      expect(agent.file).toBe(packageAgents);
    }
    expect(agents.find((agent) => agent.name === 'swe')?.maxSteps).toBe(30);
  });

  it('lists the shipped agents as text', async () => {
    const result = await runCli(['agents'], { cwd: makeFixture({}) });
    expect(result.exitCode).toBe(0);
    for (const [name, tools] of Object.entries(shippedAgents)) {
      expect(result.stdout).toMatch(new RegExp(`^${name}: .+\\n  tools: ${tools.join(', ')}\\n  model profile: default, max steps: \\d+$`, 'm'));
    }
  });

  it('adds agents from the current folder and lets them replace shipped ones of the same name', async () => {
    const local = 'version: 1\nagents:\n  assistant:\n    description: A local assistant.\n    tools: [terminate, list_files]\n    max_steps: 2\n  reviewer:\n    description: Reviews.\n';
    const fixture = makeFixture({ 'agents.yaml': local });
    const result = await runCli(['agents', '--json'], { cwd: fixture });
    expect(result.exitCode).toBe(0);
    const agents = result.json as ListedAgent[];
    expect(agents.map((agent) => agent.name).sort()).toEqual(['assistant', 'browser', 'data_analysis', 'manus', 'planner', 'reviewer', 'swe']);
    expect(agents.find((agent) => agent.name === 'assistant')).toEqual({
      name: 'assistant',
      description: 'A local assistant.',
      tools: ['terminate', 'list_files'],
      llm: 'default',
      maxSteps: 2,
      file: join(fixture, 'agents.yaml'),
    });
    expect(agents.find((agent) => agent.name === 'reviewer')?.tools).toEqual(['terminate']);
  });

  it('reports a broken agents.yaml in the current folder and exits 2', async () => {
    const fixture = makeFixture({ 'agents.yaml': 'version: 1\nagents:\n  reviewer:\n    tool: [terminate]\n' });
    const result = await runCli(['agents', '--json'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("agents.yaml:4:5: error: unknown key 'tool' in 'agents.reviewer' (did you mean 'tools'?)");
    expect((result.json as ListedAgent[]).map((agent) => agent.name).sort()).toEqual(Object.keys(shippedAgents).sort());
  });
});

describe('manus --version', () => {
  it('prints the package version and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version'], { cwd: makeFixture({}) });
    expect(result.stdout).toBe(`${version}\n`);
    expect(result.exitCode).toBe(0);
  });
});
