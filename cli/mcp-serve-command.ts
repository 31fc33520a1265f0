/**
 * `manus mcp serve`: the command line of the MCP server. Serving stops when a stdio client closes
 * stdin, or on SIGTERM or Ctrl-C; running calls are cancelled (recipe runs end as interrupted and
 * can be resumed) and everything the tools started is disposed before the process ends.
 */
import { Command, InvalidArgumentError } from 'commander';
import { UsageError } from '../runtime/contract/errors.js';
import { ExitCode } from './exit-codes.js';
import type { SandboxSettings } from '../runtime/contract/tool.js';
import { sandboxKind } from './sandbox-option.js';

/** The package's version, filled in by the build. */
declare const MANUS_VERSION: string;

export interface McpServeCommandOptions {
  tools: string[];
  plugins: string[];
  recipe: string[];
  transport: 'stdio' | 'http';
  port: number;
  host: string;
  allowedHost: string[];
  tokenEnv?: string;
  trust: string[];
  sandbox?: SandboxSettings['kind'];
  runsDir?: string;
  workspace?: string;
}

/** How long a stop may take before the process ends regardless. */
const stopGraceMilliseconds = 5000;

export function mcpServeCommand(finish: (code: number) => never): Command {
  return new Command('serve')
    .description('serve tools, and recipes as tools, to MCP clients over stdio or Streamable HTTP')
    .option('--tools <names>', 'plugin tools to serve, comma-separated (repeatable)', collectNames, [])
    .option('--plugins <folder>', 'an extra plugin folder to load tools from (repeatable)', collect, [])
    .option('--recipe <file>', 'a recipe to serve as one tool (repeatable)', collect, [])
    .option('--transport <kind>', 'stdio or http', transportKind, 'stdio')
    .option('--port <n>', 'the HTTP port (0 picks a free one)', port, 8765)
    .option('--host <address>', 'the address HTTP listens on; other than loopback needs --token-env', '127.0.0.1')
    .option('--allowed-host <name>', 'a host name HTTP requests may use besides the bound address (repeatable)', collect, [])
    .option('--token-env <name>', 'the environment variable holding the bearer token HTTP clients must send')
    .option('--trust <grants>', 'grants for served recipes and tools, as for manus run (repeatable)', collect, [])
    .option('--sandbox <kind>', 'where tools run code: auto, bwrap, docker, or host', sandboxKind)
    .option('--runs-dir <folder>', 'where run folders go (default .manus/runs)')
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
  const token = options.tokenEnv === undefined ? undefined : process.env[options.tokenEnv];
  if (options.tokenEnv !== undefined && !token) throw new UsageError(`--token-env ${options.tokenEnv}: the environment variable is not set`);
  // A tool's stray error must not end a server that others' calls are using.
  process.on('unhandledRejection', (error) => process.stderr.write(`manus: a tool left an error unhandled: ${describe(error)}\n`));
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
  const stopped = await new Promise<'ended' | 'signal'>((resolve) => {
    void serving.ended.then(() => resolve('ended'));
    process.once('SIGINT', () => resolve('signal'));
    process.once('SIGTERM', () => resolve('signal'));
  });
  setTimeout(() => finish(ExitCode.interrupted), stopGraceMilliseconds).unref();
  await serving.close();
  return stopped === 'ended' ? ExitCode.success : ExitCode.interrupted;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function collectNames(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(',').map((name) => name.trim()).filter(Boolean)];
}

function transportKind(value: string): 'stdio' | 'http' {
  if (value !== 'stdio' && value !== 'http') throw new InvalidArgumentError('expected stdio or http');
  return value;
}

function port(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return number;
}
