/**
 * `manus a2a serve`: the command line of the A2A server. The SDK and express load only when this
 * command runs. Serving stops on SIGTERM or Ctrl-C; running tasks are cancelled (their runs end as
 * interrupted and can be resumed) before the process ends.
 */
import { Command } from 'commander';
import { addHttpServeOptions, bearerToken, collect, reportStrayErrors, serveUntilStopped, type HttpServeOptions } from './http-serve-options.js';

/** The package's version, filled in by the build. */
declare const MANUS_VERSION: string;

export interface A2aServeCommandOptions extends HttpServeOptions {
  recipe: string[];
}

export function a2aServeCommand(finish: (code: number) => never): Command {
  const command = new Command('serve')
    .description('serve recipes to A2A clients: one skill per recipe, each task a recorded run')
    .option('--recipe <file>', 'a recipe to serve as one skill (repeatable)', collect, []);
  return addHttpServeOptions(command, { port: 8766, served: 'the served recipes' })
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
  const token = bearerToken(options);
  reportStrayErrors();
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
  return serveUntilStopped(serving, finish);
}
