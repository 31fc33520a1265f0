/**
 * `manus a2a serve`: the command line of the A2A server. The SDK and express load only when this
 * command runs. Serving stops on SIGTERM or Ctrl-C; running tasks are cancelled (their runs end as
 * interrupted and can be resumed) before the process ends.
 */
import { Command, InvalidArgumentError } from 'commander';
import { UsageError } from '../runtime/contract/errors.js';
import { ExitCode } from './exit-codes.js';
import type { SandboxSettings } from '../runtime/contract/tool.js';
import { sandboxKind } from './sandbox-option.js';

/** The package's version, filled in by the build. */
declare const MANUS_VERSION: string;

export interface A2aServeCommandOptions {
  recipe: string[];
  port: number;
  host: string;
  allowedHost: string[];
  tokenEnv?: string;
  trust: string[];
  sandbox?: SandboxSettings['kind'];
  runsDir?: string;
}

/** How long a stop may take before the process ends regardless. */
const stopGraceMilliseconds = 5000;

export function a2aServeCommand(finish: (code: number) => never): Command {
  return new Command('serve')
    .description('serve recipes to A2A clients: one skill per recipe, each task a recorded run')
    .option('--recipe <file>', 'a recipe to serve as one skill (repeatable)', collect, [])
    .option('--port <n>', 'the HTTP port (0 picks a free one)', port, 8766)
    .option('--host <address>', 'the address to listen on; other than loopback needs --token-env', '127.0.0.1')
    .option('--allowed-host <name>', 'a host name requests may use besides the bound address (repeatable)', collect, [])
    .option('--token-env <name>', 'the environment variable holding the bearer token clients must send')
    .option('--trust <grants>', 'grants for the served recipes, as for manus run (repeatable)', collect, [])
    .option('--sandbox <kind>', 'where tools run code: auto, bwrap, docker, or host', sandboxKind)
    .option('--runs-dir <folder>', 'where run folders go (default .manus/runs)')
    .addHelpText('after', serveHelp)
    .action(async (options: A2aServeCommandOptions) => finish(await serve(options, finish)));
}

const serveHelp = `
Examples:
  manus a2a serve --recipe recipes/country-facts.yaml       card at http://127.0.0.1:8766/.well-known/agent-card.json
  A2A_TOKEN=... manus a2a serve --host 0.0.0.0 --allowed-host agents.example.org --token-env A2A_TOKEN --recipe a.yaml

Exit codes:
  2    usage or validation error (a broken recipe, no token beyond loopback)
  130  stopped by SIGINT or SIGTERM`;

async function serve(options: A2aServeCommandOptions, finish: (code: number) => never): Promise<number> {
  const [{ startA2aServer }, { parseTrustGrants }] = await Promise.all([
    import('../runtime/applications/a2a-server/serve.js'),
    import('../runtime/contract/trust-grants.js'),
  ]);
  const token = options.tokenEnv === undefined ? undefined : process.env[options.tokenEnv];
  if (options.tokenEnv !== undefined && !token) throw new UsageError(`--token-env ${options.tokenEnv}: the environment variable is not set`);
  // A tool's stray error must not end a server that others' tasks are using.
  process.on('unhandledRejection', (error) => process.stderr.write(`manus: a tool left an error unhandled: ${error instanceof Error ? error.message : String(error)}\n`));
  const serving = await startA2aServer({
    cwd: process.cwd(),
    environment: process.env,
    recipes: options.recipe,
    host: options.host,
    port: options.port,
    allowedHosts: options.allowedHost,
    token,
    trust: [...parseTrustGrants(options.trust)],
    sandbox: options.sandbox,
    runsDirectory: options.runsDir,
    version: MANUS_VERSION,
  });
  process.stderr.write(`serving A2A at ${serving.url} (agent card: ${serving.cardUrl})\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  setTimeout(() => finish(ExitCode.interrupted), stopGraceMilliseconds).unref();
  await serving.close();
  return ExitCode.interrupted;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function port(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return number;
}
