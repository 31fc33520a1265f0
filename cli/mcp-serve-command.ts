/**
 * `manus mcp serve`: the command line of the MCP server. Serving stops when a stdio client closes
 * stdin, or on SIGTERM or Ctrl-C; running calls are cancelled (recipe runs end as interrupted and
 * can be resumed) and everything the tools started is disposed before the process ends.
 */
import { Command, InvalidArgumentError } from 'commander';
import { addHttpServeOptions, bearerToken, collect, reportStrayErrors, serveUntilStopped, type HttpServeOptions } from './http-serve-options.js';

/** The package's version, filled in by the build. */
declare const MANUS_VERSION: string;

export interface McpServeCommandOptions extends HttpServeOptions {
  tools: string[];
  plugins: string[];
  recipe: string[];
  transport: 'stdio' | 'http';
  workspace?: string;
}

export function mcpServeCommand(finish: (code: number) => never): Command {
  const command = new Command('serve')
    .description('serve tools, and recipes as tools, to MCP clients over stdio or Streamable HTTP')
    .option('--tools <names>', 'plugin tools to serve, comma-separated (repeatable)', collectNames, [])
    .option('--plugins <folder>', 'an extra plugin folder to load tools from (repeatable)', collect, [])
    .option('--recipe <file>', 'a recipe to serve as one tool (repeatable)', collect, [])
    .option('--transport <kind>', 'stdio or http', transportKind, 'stdio');
  return addHttpServeOptions(command, { port: 8765, served: 'served recipes and tools' })
    .option('--workspace <folder>', 'the folder served tools work in, shared by every connection (default workspace/<id> for each)')
    .addHelpText('after', serveHelp)
    .action(async (options: McpServeCommandOptions) => finish(await serve(options, finish)));
}

const serveHelp = `
Examples:
  manus mcp serve --tools str_replace_editor,bash                 stdio, for a desktop client
  manus mcp serve --workspace . --tools str_replace_editor,bash   the same, working in this folder
  manus mcp serve --recipe recipes/country-facts.yaml             a recipe as one tool
  manus mcp serve --transport http --port 8765 --tools web_fetch   http://127.0.0.1:8765/mcp
  MCP_TOKEN=... manus mcp serve --transport http --host 0.0.0.0 --token-env MCP_TOKEN --tools web_fetch

Exit codes:
  0    the client closed stdin
  2    usage or validation error (an unknown tool, a broken recipe, no token beyond loopback)
  130  stopped by SIGINT or SIGTERM`;

async function serve(options: McpServeCommandOptions, finish: (code: number) => never): Promise<number> {
  const [{ startMcpServer }, { parseTrustGrants }] = await Promise.all([
    import('../runtime/applications/mcp-server/serve.js'),
    import('../runtime/contract/trust-grants.js'),
  ]);
  const token = bearerToken(options);
  reportStrayErrors();
  const serving = await startMcpServer({
    cwd: process.cwd(),
    environment: process.env,
    tools: options.tools,
    pluginFolders: options.plugins,
    recipes: options.recipe,
    transport: options.transport,
    host: options.host,
    port: options.port,
    allowedHosts: options.allowedHost,
    token,
    trust: [...parseTrustGrants(options.trust)],
    sandbox: options.sandbox,
    runsDirectory: options.runsDir,
    workspace: options.workspace,
    version: MANUS_VERSION,
  });
  if (serving.url) process.stderr.write(`serving MCP at ${serving.url}\n`);
  return serveUntilStopped(serving, finish, serving.ended);
}

function collectNames(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(',').map((name) => name.trim()).filter(Boolean)];
}

function transportKind(value: string): 'stdio' | 'http' {
  if (value !== 'stdio' && value !== 'http') throw new InvalidArgumentError('expected stdio or http');
  return value;
}
