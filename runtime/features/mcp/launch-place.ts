/**
 * Where a stdio server runs. One the user declared (their config, `--mcp`) or the package ships
 * runs on the host. One a recipe or a project's agents.yaml declares is a command from someone
 * else: it runs in the run's sandbox, like the agent's code, unless the user grants `mcp`. Either
 * way the process is started by a sandbox, so it is contained, recorded in the run folder and
 * killed with the run (or at the next start, after the runtime was killed).
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PermissionDeniedError } from '../../contract/errors.js';
import { isInside } from '../../services/workspace-paths.js';
import type { TrustGrant } from '../../contract/trust-grants.js';
import type { Sandbox, SandboxSession } from '../../contract/sandbox-types.js';
import { isTrustedServer, type McpEnvironmentValue, type McpServerConfig } from './server-config.js';

export interface LaunchServices {
  /** The run's sandbox, shared with the agent's code-running tools. */
  runSandbox(): Promise<Sandbox>;
  /** A host sandbox of the run's own, for servers that run on the host. */
  hostSandbox(): Promise<Sandbox>;
  trustGrants: ReadonlySet<TrustGrant>;
  /** The user chose the host as the run's sandbox (`--sandbox host`): consent to run code there. */
  hostChosenByUser: boolean;
  environment: Record<string, string | undefined>;
  /** The run's workspace on the host: the root an HTTP server is told about. */
  workspace: string;
}

export interface LaunchedServer {
  session: SandboxSession;
  place: string;
  /** The run's workspace as the server sees it: the root it is offered (MCP roots). */
  workspacePath: string;
}

/**
 * `cd` first: the server starts in its declaring folder, which a sandbox's own working folder (the
 * workspace) is not. Then, as npm scripts do, the `node_modules/.bin` folders at and above it come
 * first on PATH, so a server installed with npm beside the recipe is found by its name.
 */
const startInFolder = 'cd -- "$1" && { [ -z "$2" ] || PATH="$2:$PATH"; } && shift 2 && exec "$@"';

export async function launchStdioServer(server: McpServerConfig, services: LaunchServices): Promise<LaunchedServer> {
  if (server.transport.kind !== 'stdio') throw new Error(`the MCP server '${server.name}' is not a stdio server`);
  const { command, args, cwd } = server.transport;
  const env = resolveEnvironment(server.name, server.transport.env, services.environment);
  const packageFolders = nodeModulesAbove(cwd);
  const binFolders = packageFolders.map((folder) => join(folder, '.bin')).filter((folder) => existsSync(folder));
  const argv = ['sh', '-c', startInFolder, 'mcp-server', cwd, binFolders.join(':'), command, ...args];
  if (isTrustedServer(server) || services.trustGrants.has('mcp')) {
    const sandbox = await services.hostSandbox();
    return { session: await sandbox.spawnSession(argv, { env }), place: 'host', workspacePath: sandbox.workspacePath };
  }
  const sandbox = await services.runSandbox();
  if (sandbox.kind === 'host' && !services.hostChosenByUser && !services.trustGrants.has('host')) {
    throw new PermissionDeniedError(
      `the MCP server '${server.name}' declared in ${server.declaredIn} would run on the host, since the run has no sandbox; rerun with --trust mcp to allow it, or make bubblewrap available`,
    );
  }
  // The installed packages a server is found in are shown with its folder, read-only.
  const readOnlyFolders = [cwd, ...packageFolders.filter((folder) => !isInside(cwd, folder))];
  const openedFolders = startsInItsOwnFolder(server, cwd) ? readOnlyFolders : [];
  return { session: await sandbox.spawnSession(argv, { env, readOnlyFolders, openedFolders }), place: sandbox.kind, workspacePath: sandbox.workspacePath };
}

/**
 * A server that starts in the folder of the file declaring it, or below, starts where the user
 * chose to run from: the sandbox opens that folder to it wherever it lies. A recipe's `cwd:`
 * pointing elsewhere (`/root`, or a link to it) gets no more than the sandbox's user could see.
 */
function startsInItsOwnFolder(server: McpServerConfig, cwd: string): boolean {
  try {
    return isInside(realpathSync(dirname(server.declaredIn)), realpathSync(cwd));
  } catch {
    return false;
  }
}

/** Every `node_modules` folder at or above `folder`, nearest first, as Node resolves packages. */
export function nodeModulesAbove(folder: string): string[] {
  const found: string[] = [];
  for (let current = folder; ; current = dirname(current)) {
    const candidate = join(current, 'node_modules');
    if (existsSync(candidate)) found.push(candidate);
    if (dirname(current) === current) return found;
  }
}

/** Literal values as written; `{env: NAME}` takes the user's variable, which must be set. */
export function resolveEnvironment(server: string, written: Record<string, McpEnvironmentValue>, environment: Record<string, string | undefined>): Record<string, string> {
  const resolved: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, value] of Object.entries(written)) {
    if (typeof value === 'string') resolved[name] = value;
    else if (environment[value.env] !== undefined) resolved[name] = environment[value.env]!;
    else missing.push(value.env);
  }
  if (missing.length > 0) throw new Error(`the MCP server '${server}' needs environment variables that are not set: ${missing.join(', ')}`);
  return resolved;
}
