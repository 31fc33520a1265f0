/**
 * What the two servers, `manus mcp serve` and `manus a2a serve`, share on the command line: where
 * HTTP listens and who may call it, what the served runs may do, and how serving stops.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { UsageError } from '../runtime/contract/errors.js';
import type { SandboxSettings } from '../runtime/contract/tool.js';
import { ExitCode } from './exit-codes.js';
import { sandboxKind } from './sandbox-option.js';

export interface HttpServeOptions {
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

/** Adds the shared options, in the order the help lists them; `served` names what `--trust` is for. */
export function addHttpServeOptions(command: Command, defaults: { port: number; served: string }): Command {
  return command
    .option('--port <n>', 'the HTTP port (0 picks a free one)', port, defaults.port)
    .option('--host <address>', 'the address HTTP listens on; other than loopback needs --token-env', '127.0.0.1')
    .option('--allowed-host <name>', 'a host name HTTP requests may use besides the bound address (repeatable)', collect, [])
    .option('--token-env <name>', 'the environment variable holding the bearer token HTTP clients must send')
    .option('--trust <grants>', `grants for ${defaults.served}, as for manus run (repeatable)`, collect, [])
    .option('--sandbox <kind>', 'where tools run code: auto, bwrap, docker, or host', sandboxKind)
    .option('--runs-dir <folder>', 'where run folders go (default .manus/runs)');
}

/** The bearer token `--token-env` names; naming a variable that is not set is a usage error. */
export function bearerToken(options: Pick<HttpServeOptions, 'tokenEnv'>): string | undefined {
  if (options.tokenEnv === undefined) return undefined;
  const token = process.env[options.tokenEnv];
  if (!token) throw new UsageError(`--token-env ${options.tokenEnv}: the environment variable is not set`);
  return token;
}

/** A tool's stray error must not end a server that others' calls are using: it is reported instead. */
export function reportStrayErrors(): void {
  process.on('unhandledRejection', (error) => process.stderr.write(`manus: a tool left an error unhandled: ${error instanceof Error ? error.message : String(error)}\n`));
}

/**
 * Serves until SIGINT, SIGTERM or `ended` (a stdio client closing stdin), then closes the server,
 * ending the process anyway if closing takes longer than the grace period. Returns the exit code.
 */
export async function serveUntilStopped(serving: { close(): Promise<void> }, finish: (code: number) => never, ended?: Promise<unknown>): Promise<number> {
  const stopped = await new Promise<'ended' | 'signal'>((resolve) => {
    void ended?.then(() => resolve('ended'));
    process.once('SIGINT', () => resolve('signal'));
    process.once('SIGTERM', () => resolve('signal'));
  });
  setTimeout(() => finish(ExitCode.interrupted), stopGraceMilliseconds).unref();
  await serving.close();
  return stopped === 'ended' ? ExitCode.success : ExitCode.interrupted;
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function port(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return number;
}
