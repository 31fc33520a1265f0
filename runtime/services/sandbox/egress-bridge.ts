/**
 * How a sandbox with no network but its own loopback reaches the run's egress proxy: the proxy's
 * Unix sockets are bound in alone, and Debian's socat, started inside the sandbox's network
 * namespace, listens on its loopback and carries each connection to a socket. Commands find the
 * proxy through the usual variables, in both cases since curl reads only the lowercase
 * `http_proxy`. Nothing else leaves the sandbox: there is no interface but loopback, so neither a
 * raw connection nor a DNS query (whatever resolv.conf names) gets out.
 */
import { egressBridgePorts, type ConnectionRefusal } from '../../contract/egress.js';
import type { SandboxCommandResult, SandboxEgress } from '../../contract/sandbox-types.js';

export type { SandboxEgress };

/** Where the two sockets appear inside a sandbox's own folder. */
export function bridgeSockets(folder: string): { http: string; socks: string } {
  return { http: `${folder}/http.sock`, socks: `${folder}/socks.sock` };
}

/** The proxy variables a command sees. */
export function egressEnvironment(): Record<string, string> {
  const http = `http://127.0.0.1:${egressBridgePorts.http}`;
  const socks = `socks5h://127.0.0.1:${egressBridgePorts.socks}`;
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: http, HTTPS_PROXY: http, ALL_PROXY: socks, NO_PROXY: noProxy,
    http_proxy: http, https_proxy: http, all_proxy: socks, no_proxy: noProxy,
  };
}

/**
 * socat copies through an 8 KiB buffer by default, which costs a 10 MB download several tens of
 * milliseconds more than the proxy itself does (bench/egress-bench.ts); 256 KiB keeps up with it.
 */
export const socatOptions = ['-b', '262144'];

/** Starts the two socat listeners in the background, each connection to its socket. */
export function startBridgeScript(folder: string): string {
  const sockets = bridgeSockets(folder);
  const listener = (port: number, socket: string) =>
    `socat ${socatOptions.join(' ')} TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${socket} </dev/null >/dev/null 2>&1 &`;
  return `${listener(egressBridgePorts.http, sockets.http)}\n${listener(egressBridgePorts.socks, sockets.socks)}\n`;
}

/**
 * Waits, up to about five seconds, until both listeners are up (a line per listening socket in
 * /proc/net/tcp, whose addresses are hexadecimal), then runs the command in their place.
 */
export function awaitBridgeScript(): string {
  const entry = (port: number) => `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A`;
  return [
    'tries=0',
    `until grep -q '${entry(egressBridgePorts.http)}' /proc/net/tcp && grep -q '${entry(egressBridgePorts.socks)}' /proc/net/tcp; do`,
    '  tries=$((tries + 1)); [ "$tries" -gt 500 ] && { echo "manus: the egress proxy bridge did not start" >&2; exit 125; }',
    '  sleep 0.01',
    'done',
    'exec "$@"',
  ].join('\n');
}

/** The command line of a command run behind the bridge: `sh -c <script> manus-egress argv...`. */
export function behindBridge(script: string, argv: readonly string[]): string[] {
  return ['sh', '-c', script, 'manus-egress', ...argv];
}

/**
 * Adds a line per host refused while the command ran to its standard error, naming the host and
 * what would allow it: the proxy's own answer (a 403 body, a SOCKS status) may not reach the
 * person reading, since the program that got it words its failure its own way.
 */
export function withRefusalLines(result: SandboxCommandResult, refusals: readonly ConnectionRefusal[]): SandboxCommandResult {
  if (refusals.length === 0) return result;
  const lines = [...new Set(refusals.map((refusal) => `manus: ${refusal.message}`))];
  const separator = result.stderr.length > 0 && result.stderr[result.stderr.length - 1] !== 0x0a ? '\n' : '';
  return { ...result, stderr: Buffer.concat([result.stderr, Buffer.from(`${separator}${lines.join('\n')}\n`)]) };
}

/** The command as one line, for events and messages. */
export function commandText(argv: readonly string[]): string {
  return argv.length === 3 && argv[0] === 'sh' && argv[1] === '-c' ? argv[2] : argv.join(' ');
}
