import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFixture, runCli } from './support/run-cli.js';

// A plugin that leaves a mark when its code runs: inspecting must not run it.
const markingPlugin = `import { writeFileSync } from 'node:fs';
import { defineTool } from 'manus-runtime';
writeFileSync(new URL('./ran.txt', import.meta.url), 'the plugin ran');
export default defineTool({
  name: 'stamp',
  description: 'Stamps a page.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'stamped'; },
});
`;

const recipe = `version: 1
name: audited
description: Everything inspect shows.
parameters:
  topic: { type: string, default: tides }
prompt: Write about {{topic}}.
plugins: [their-plugins]
agent:
  tools: [stamp, str_replace_editor, mcp_notes_read_note, terminate]
  permissions:
    deny: [bash]
    ask: [str_replace_editor]
mcp_servers:
  notes:
    command: node
    args: [notes-server.mjs, --read-only]
  unused:
    command: ./unused-server
sandbox:
  kind: bwrap
  network: true
  pass_env: [NOTES_TOKEN]
checks:
  - command: test -s report.md
    name: the report is written
  - file: report.md
    matches: "[Tt]ides"
retry:
  max_attempts: 2
  on_failure: rm -f report.md
`;

const flowRecipe = `version: 1
name: two-steps
parameters:
  topic: { type: string, default: tides }
flow:
  - name: outline
    kind: agent
    agent: assistant
    prompt: Outline {{topic}}.
  - name: research
    kind: parallel
    steps:
      - name: left
        kind: agent
        agent: assistant
        prompt: "Left half: {{steps.outline.answer}}"
      - name: right
        kind: agent
        agent: assistant
        prompt: "Right half: {{steps.outline.answer}}"
answer: "{{steps.research.answers}}"
`;

describe('manus inspect', () => {
  const folder = makeFixture({ 'audited.yaml': recipe, 'their-plugins/stamp.ts': markingPlugin, 'flow.yaml': flowRecipe });
  const pluginHash = createHash('sha256').update(readFileSync(join(folder, 'their-plugins', 'stamp.ts'))).digest('hex');

  it('prints agents, tools, plugin files with hashes, MCP servers, checks, on_failure, the sandbox and what needs --trust', async () => {
    const result = await runCli(['inspect', 'audited.yaml'], { cwd: folder });
    expect(result.exitCode, result.stderr).toBe(0);
    const text = result.stdout;
    expect(text).toContain('recipe audited: Everything inspect shows.');
    expect(text).toContain('  topic (string, default "tides")');
    expect(text).toContain('    tool stamp: plugin their-plugins/stamp.ts');
    expect(text).toContain('    tool mcp_notes_read_note: MCP server notes');
    expect(text).toContain('    tool terminate: runtime');
    expect(text).toContain('    tool str_replace_editor: built-in plugin plugins/files/index.ts');
    expect(text).toContain('    denied: bash');
    expect(text).toContain('    asks before: str_replace_editor');
    expect(text).toContain(`    stamp.ts  sha256:${pluginHash}`);
    expect(text).toContain('      declares: stamp');
    expect(text).toMatch(/notes: command: node notes-server\.mjs --read-only \(in .*\); starts with the run; runs in the run's sandbox \(in bubblewrap\); on the host with --trust mcp/);
    expect(text).toContain("may ask the run's model for completions only with --trust sampling");
    expect(text).toMatch(/unused: command: \.\/unused-server .*declared, not used by the agents/);
    expect(text).toContain('  the report is written: command: test -s report.md (runs in bubblewrap)');
    expect(text).toContain('  report.md matches /[Tt]ides/: file report.md /[Tt]ides/');
    expect(text).toContain('on_failure: command: rm -f report.md (runs in bubblewrap, before each retry)');
    expect(text).toContain('sandbox: bwrap (from the recipe): code runs in bubblewrap');
    expect(text).toContain('network on;');
    expect(text).toContain('passes NOTES_TOKEN');
    expect(text).toContain('needs your consent:');
    expect(text).toMatch(/--trust network: give sandboxed code network access \(sandbox\.network: true at audited\.yaml:21:12\)/);
    expect(text).toMatch(/--trust env: pass environment variables into the sandbox.*\(sandbox\.pass_env: \[NOTES_TOKEN\] at audited\.yaml:22:13\)/);
    expect(text).toMatch(/--trust mcp: start the MCP servers it declares on the host, outside the sandbox \(mcp_servers\.notes at audited\.yaml:14:3\); without it the server runs in the run's sandbox/);
    expect(text).toContain('run with --trust network,env,mcp to allow all of it');
  });

  it('runs none of the plugin code it lists', async () => {
    await runCli(['inspect', 'audited.yaml', '--json'], { cwd: folder });
    expect(existsSync(join(folder, 'their-plugins', 'ran.txt'))).toBe(false);
  });

  it('gives the same as one object with --json', async () => {
    const result = await runCli(['inspect', 'audited.yaml', '--json'], { cwd: folder });
    expect(result.exitCode, result.stderr).toBe(0);
    const inspection = result.json;
    expect(inspection).toMatchObject({
      kind: 'recipe',
      name: 'audited',
      agents: [expect.objectContaining({
        name: 'audited (inline)',
        tools: expect.arrayContaining([
          { name: 'stamp', source: 'plugin', file: join(folder, 'their-plugins', 'stamp.ts') },
          { name: 'mcp_notes_read_note', source: 'mcp server', server: 'notes' },
        ]),
        permissions: { default: 'allow', allow: [], deny: ['bash'], ask: ['str_replace_editor'], onAsk: 'ask' },
      })],
      mcpServers: expect.arrayContaining([
        expect.objectContaining({ name: 'notes', transport: 'stdio', command: ['node', 'notes-server.mjs', '--read-only'], starts: true, needs: 'mcp' }),
        expect.objectContaining({ name: 'unused', starts: false }),
      ]),
      checks: [
        { name: 'the report is written', kind: 'command', command: 'test -s report.md', runs: 'in bubblewrap' },
        { name: 'report.md matches /[Tt]ides/', kind: 'file', file: 'report.md', pattern: '[Tt]ides' },
      ],
      onFailure: { name: 'on_failure', command: 'rm -f report.md', runs: 'in bubblewrap' },
      sandbox: { kind: 'bwrap', network: true, passEnv: ['NOTES_TOKEN'], declaredBy: 'the recipe' },
      grantsNeeded: ['network', 'env', 'mcp'],
    });
    const plugins = inspection.pluginFolders.find((entry: { folder: string }) => entry.folder === join(folder, 'their-plugins'));
    expect(plugins.plugins).toEqual([{ entry: join(folder, 'their-plugins', 'stamp.ts'), names: ['stamp'], files: [{ path: join(folder, 'their-plugins', 'stamp.ts'), sha256: pluginHash, bytes: markingPlugin.length }] }]);
    expect(inspection.trust.map((request: { grant: string }) => request.grant)).toEqual(['network', 'env', 'mcp']);
  });

  it('shows a flow\'s steps and the agent of each', async () => {
    const result = await runCli(['inspect', 'flow.yaml'], { cwd: folder });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('flow steps:\n  outline: agent, agent assistant\n  research: parallel\n  research.left: agent, agent assistant\n  research.right: agent, agent assistant');
    expect(result.stdout).toMatch(/assistant \(.*agents\.yaml\): model profile default, steps outline, left, right/);
    expect(result.stdout).toContain('needs your consent: nothing (no --trust grant)');
    const json = await runCli(['inspect', 'flow.yaml', '--json'], { cwd: folder });
    expect(json.json.flow.steps.map((step: { path: string }) => step.path)).toEqual(['outline', 'research', 'research.left', 'research.right']);
  });

  it('lists every endpoint that would receive the user\'s keys, the sandbox user and the prompt files the run reads', async () => {
    const project = makeFixture({
      'agents.yaml': 'version: 1\nllm:\n  far:\n    base_url: http://127.0.0.1:9/v1\nagents:\n  helper:\n    llm: far\n    system_prompt: {file: prompts/helper.md}\n    tools: [terminate]\n',
      'prompts/helper.md': 'You help.\n',
      'prompts/task.md': 'Find owls.\n',
      'recipe.yaml': [
        'version: 1', 'name: reaching', 'prompt: {file: prompts/task.md}',
        'agent:', '  tools: [agent:helper, web_search, terminate]',
        'tool_settings:', '  web_search:', '    endpoints: { tavily: "http://127.0.0.1:9/search" }',
        'sandbox:', '  kind: bwrap', '  user: "1001:1001"', '',
      ].join('\n'),
    });
    const result = await runCli(['inspect', 'recipe.yaml'], { cwd: project });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('prompt files (sent to the model):\n  prompts/task.md\n  prompts/helper.md\n');
    expect(result.stdout).toMatch(/--trust env: .*\(llm\.far\.base_url: http:\/\/127\.0\.0\.1:9\/v1, which would receive OPENAI_API_KEY at agents\.yaml:4:5\)/);
    expect(result.stdout).toMatch(/--trust env: .*\(tool_settings\.web_search\.endpoints\.tavily: http:\/\/127\.0\.0\.1:9\/search, which would receive TAVILY_API_KEY at recipe\.yaml:8:26\)/);
    expect(result.stdout).toMatch(/--trust user: run sandboxed commands as a user it chose, with that user's access to the host's files \(sandbox\.user: 1001:1001, the default is nobody \(65534\), or in Docker the workspace's owner at recipe\.yaml:11:9\)/);
    expect(result.stdout).toContain('run with --trust env,user to allow all of it');
    const json = await runCli(['inspect', 'recipe.yaml', '--json'], { cwd: project });
    expect(json.json.promptFiles).toEqual([join(project, 'prompts', 'task.md'), join(project, 'prompts', 'helper.md')]);
    expect(json.json.grantsNeeded).toEqual(['env', 'user']);
  });

  it('refuses a recipe whose prompt file lies outside its folder, naming the file, as validate does', async () => {
    const project = makeFixture({ 'recipes/recipe.yaml': 'version: 1\nname: peek\nprompt: {file: ../notes.md}\nagent: assistant\n', 'notes.md': 'private\n' });
    const result = await runCli(['inspect', 'recipes/recipe.yaml'], { cwd: project });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`recipes/recipe.yaml:3:16: error: prompt file '../notes.md' cannot be read: ${join(project, 'notes.md')} is outside ${join(project, 'recipes')}`);
    expect(result.stdout).not.toContain('private');
  });

  it('reports a broken recipe as validate does, with exit 2', async () => {
    const broken = makeFixture({ 'broken.yaml': 'version: 1\nname: broken\nprompt: Hi.\nagent: nobody\n' });
    const result = await runCli(['inspect', 'broken.yaml'], { cwd: broken });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("broken.yaml:4:8: error: no agent named 'nobody'");
  });

  it('inspects a whole pack, and each of its recipes', async () => {
    const project = makeFixture({
      'node_modules/acme-audit/package.json': JSON.stringify({ name: 'acme-audit', version: '2.0.0', manus: { recipes: 'shared' } }),
      'node_modules/acme-audit/shared/audited.yaml': recipe.replace('plugins: [their-plugins]\n', ''),
      'node_modules/acme-audit/shared/steps.yaml': flowRecipe,
      'node_modules/acme-audit/plugins/stamp.ts': markingPlugin,
    });
    const result = await runCli(['inspect', 'acme-audit'], { cwd: project });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('pack acme-audit 2.0.0');
    expect(result.stdout).toContain('  recipes: acme-audit/audited, acme-audit/steps');
    expect(result.stdout).toContain('  run as: manus run acme-audit/steps');
    expect(result.stdout).toContain('flow steps:\n  outline: agent, agent assistant\n  research: parallel');
    expect(result.stdout).toMatch(/notes: command: node notes-server\.mjs --read-only \(in node_modules\/acme-audit\/shared\)/);
    expect(result.stdout).toContain(`      stamp.ts  sha256:${pluginHash}`);
    expect(result.stdout).toContain('  needs: --trust network,env,mcp for some of its recipes');
    expect(result.stdout).toContain('    tool stamp: plugin node_modules/acme-audit/plugins/stamp.ts, pack acme-audit');
    expect(existsSync(join(project, 'node_modules', 'acme-audit', 'plugins', 'ran.txt'))).toBe(false);
    const single = await runCli(['inspect', 'acme-audit/audited', '--json'], { cwd: project });
    expect(single.json).toMatchObject({ kind: 'recipe', name: 'audited', pack: { name: 'acme-audit', version: '2.0.0' } });
  });
});
