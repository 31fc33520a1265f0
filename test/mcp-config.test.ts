/**
 * How MCP servers are declared: YAML and .mcp.json, their errors with file:line:column, and how
 * their tools are named to the model.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { parseCommandLineServer } from '../runtime/features/mcp/command-line-server.js';
import { modelToolNames, serverOfToolName } from '../runtime/features/mcp/tool-names.js';
import { makeFixture } from './support/run-cli.js';

function recipeFolder(mcpServers: string, tools = '[mcp_fs_*, terminate]', extraFiles: Record<string, string> = {}): string {
  return makeFixture({
    'recipe.yaml': `version: 1\nname: mcp-config\nprompt: Do it.\nagent:\n  tools: ${tools}\n${mcpServers}\n`,
    ...extraFiles,
  });
}

async function planOf(folder: string) {
  return resolveRecipe('recipe.yaml', { cwd: folder, environment: { XDG_CONFIG_HOME: join(folder, 'no-config') } });
}

async function errorOf(folder: string): Promise<string> {
  return planOf(folder).then(() => 'no error', (error: Error) => error.message);
}

describe('mcp_servers in YAML', () => {
  it('reads every setting, with defaults and the declaring folder as the working folder', async () => {
    const folder = recipeFolder([
      'mcp_servers:',
      '  fs:',
      '    command: ./node_modules/.bin/mcp-server-filesystem',
      '    args: ["."]',
      '    env: { LOG_LEVEL: warn, TOKEN: { env: FS_TOKEN } }',
      '  docs:',
      '    url: https://example.com/mcp',
      '    headers_env: { Authorization: DOCS_TOKEN }',
      '    tools: { allow: [search, fetch] }',
      '    required: true',
      '    startup_timeout_seconds: 20',
      '    call_timeout_seconds: 60',
      '  other:',
      '    command: server',
      '    cwd: sub',
    ].join('\n'));
    const plan = await planOf(folder);
    const [fs, docs, other] = plan.mcpServers;
    expect(fs).toMatchObject({
      name: 'fs',
      transport: { kind: 'stdio', command: './node_modules/.bin/mcp-server-filesystem', args: ['.'], env: { LOG_LEVEL: 'warn', TOKEN: { env: 'FS_TOKEN' } }, cwd: folder },
      required: false,
      startupTimeoutSeconds: 30,
      callTimeoutSeconds: 120,
      origin: 'project',
    });
    expect(docs).toMatchObject({ transport: { kind: 'http', url: 'https://example.com/mcp', headers: { Authorization: { env: 'DOCS_TOKEN' } } }, tools: { allow: ['search', 'fetch'], deny: [] }, required: true, startupTimeoutSeconds: 20, callTimeoutSeconds: 60 });
    expect(other.transport).toMatchObject({ cwd: join(folder, 'sub') });
    expect(plan.mcpToolNames).toEqual(['mcp_fs_*']);
    expect([...plan.tools.keys()]).toEqual(['terminate']);
  });

  it('rejects an unknown key with a suggestion, and a server with neither command nor url, at file:line:column', async () => {
    const unknown = await errorOf(recipeFolder('mcp_servers:\n  fs:\n    comand: server'));
    expect(unknown).toMatch(/recipe\.yaml:8:5: error: unknown key 'comand' in 'mcp_servers\.fs' \(did you mean 'command'\?\)/);
    const neither = await errorOf(recipeFolder('mcp_servers:\n  fs:\n    args: [x]'));
    expect(neither).toMatch(/recipe\.yaml:7:3: error: MCP server 'fs' needs either command: .* or url:/);
    const both = await errorOf(recipeFolder('mcp_servers:\n  fs:\n    command: x\n    url: http://localhost/mcp'));
    expect(both).toContain('not both');
  });

  it('names an agent tool that belongs to no declared server', async () => {
    const message = await errorOf(recipeFolder('mcp_servers:\n  fs:\n    command: server', '[mcp_github_search, terminate]'));
    expect(message).toMatch(/recipe\.yaml:\d+:\d+: error: agent .* lists the tool 'mcp_github_search', but no MCP server it could belong to is declared .*; declared MCP servers: fs/);
  });

  it('reads a .mcp.json file, with ${NAME} values as the user\'s variables', async () => {
    const folder = recipeFolder('mcp_servers: { file: .mcp.json }', '[mcp_fs_*, terminate]', {
      '.mcp.json': JSON.stringify({ mcpServers: { fs: { command: 'npx', args: ['server', '.'], env: { TOKEN: '${FS_TOKEN}', MODE: 'x' } }, web: { type: 'http', url: 'http://localhost:1/mcp', headers: { Authorization: '${WEB_TOKEN}' } } } }, null, 2),
    });
    const plan = await planOf(folder);
    expect(plan.mcpServers.map((server) => server.name)).toEqual(['fs', 'web']);
    expect(plan.mcpServers[0]).toMatchObject({ transport: { kind: 'stdio', command: 'npx', args: ['server', '.'], env: { TOKEN: { env: 'FS_TOKEN' }, MODE: 'x' }, cwd: folder }, declaredIn: join(folder, '.mcp.json') });
    expect(plan.mcpServers[1].transport).toEqual({ kind: 'http', url: 'http://localhost:1/mcp', headers: { Authorization: { env: 'WEB_TOKEN' } } });
  });

  it('reports a bad .mcp.json with its place', async () => {
    const folder = recipeFolder('mcp_servers: { file: .mcp.json }', '[terminate]', {
      '.mcp.json': '{\n  "mcpServers": {\n    "fs": { "comand": "x" }\n  }\n}\n',
    });
    const message = await errorOf(folder);
    expect(message).toMatch(/\.mcp\.json:3:5: error: MCP server 'fs': unknown key 'comand' \(did you mean 'command'\?\)/);
    writeFileSync(join(folder, '.mcp.json'), '{ "servers": {} }');
    expect(await errorOf(folder)).toContain('an MCP servers file needs an "mcpServers" object');
  });

  it('shares an agents.yaml\'s servers with its agents', async () => {
    const folder = makeFixture({
      'agents.yaml': 'version: 1\nmcp_servers:\n  fs:\n    command: server\nagents:\n  reader:\n    tools: [mcp_fs_read_file, terminate]\n',
      'recipe.yaml': 'version: 1\nname: shared\nprompt: Do it.\nagent: reader\n',
    });
    const plan = await planOf(folder);
    expect(plan.mcpServers[0]).toMatchObject({ name: 'fs', origin: 'project', declaredIn: join(folder, 'agents.yaml') });
    expect(plan.mcpToolNames).toEqual(['mcp_fs_read_file']);
  });
});

describe('names of MCP tools', () => {
  it('replaces other characters, and cuts long or clashing names with a hash', () => {
    const names = modelToolNames('my.server', ['read file', 'read_file', 'x'.repeat(80)]);
    expect(names.get('read file')).toBe('mcp_my_server_read_file');
    expect(names.get('read_file')).toMatch(/^mcp_my_server_read_file_[0-9a-f]{8}$/);
    const long = names.get('x'.repeat(80))!;
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^mcp_my_server_x+_[0-9a-f]{8}$/);
    expect(new Set(names.values()).size).toBe(3);
  });

  it('finds the server a name refers to, the longest prefix first', () => {
    expect(serverOfToolName('mcp_fs_read', ['fs', 'fs_extra'])).toBe('fs');
    expect(serverOfToolName('mcp_fs_extra_read', ['fs', 'fs_extra'])).toBe('fs_extra');
    expect(serverOfToolName('mcp_fs_*', ['fs'])).toBe('fs');
    expect(serverOfToolName('mcp_fs_', ['fs'])).toBeUndefined();
    expect(serverOfToolName('echo', ['fs'])).toBeUndefined();
  });

  it('parses --mcp as name=command args with quotes', () => {
    const server = parseCommandLineServer(`fs=npx "mcp server" 'a b' c\\ d`, '/tmp');
    expect(server).toMatchObject({ name: 'fs', origin: 'command-line', transport: { command: 'npx', args: ['mcp server', 'a b', 'c d'], cwd: '/tmp' } });
    expect(() => parseCommandLineServer('fs', '/tmp')).toThrow(/--mcp expects name=command/);
  });
});
