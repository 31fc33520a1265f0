/**
 * The egress proxy of a run with an allowlist: an HTTP proxy (CONNECT and plain requests, from
 * proxy-chain) and a SOCKS5 proxy (from @pondwader/socks5-server), each on a Unix socket in a
 * folder only the runtime's user can open, which the sandbox binds in alone; and, for Chromium,
 * which speaks to proxies over TCP only, an HTTP proxy on a loopback port that wants a credential
 * made for this run. Every request is checked by the run's policy on its name first, then
 * resolved here and connected to the addresses checked, never resolved again. It lives in the
 * runtime's process, so it ends with the run, or with the process.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { createServer as createNetServer, type LookupFunction, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Socks5Server, defaultConnectionHandler } from '@pondwader/socks5-server';
import { RequestError, Server as HttpProxyServer, type PrepareRequestFunction } from 'proxy-chain';
import type { ConnectionRefusal, EgressProxyEndpoints } from '../../contract/egress.js';
import { PrivateAddressError } from './network-errors.js';

/** What the proxy asks of the run's egress policy (egress-policy.ts), which loads this file when first needed. */
export interface EgressPolicy {
  allows(host: string, port: number): boolean;
  resolve(host: string, port: number, via: ConnectionRefusal['via']): Promise<LookupAddress[]>;
  refuse(attempt: { host: string; port: number; via: ConnectionRefusal['via']; reason: ConnectionRefusal['reason'] }): ConnectionRefusal;
}

export interface EgressProxy extends EgressProxyEndpoints {
  close(): Promise<void>;
}

export async function startEgressProxy(policy: EgressPolicy): Promise<EgressProxy> {
  // mkdtemp makes it 0700: no other user of the host reaches the sockets.
  const folder = await mkdtemp(join(tmpdir(), 'manus-egress-'));
  const httpSocket = join(folder, 'http.sock');
  const socksSocket = join(folder, 'socks.sock');
  const http = new HttpProxyServer({ prepareRequestFunction: prepareRequest(policy, 'sandbox') });
  const httpListener = unixListenerFor(http);
  const socks = socksServer(policy);
  let browser: Promise<{ server: HttpProxyServer; endpoint: { server: string; username: string; password: string } }> | undefined;
  try {
    await listen(httpListener, httpSocket);
    await listen(socksNetServer(socks), socksSocket);
    // The sandbox's user (another uid when the runtime is root) connects through the bound socket alone.
    await Promise.all([chmod(httpSocket, 0o666), chmod(socksSocket, 0o666)]);
  } catch (error) {
    httpListener.close();
    await closeAll([http], socks, folder);
    throw error;
  }
  return {
    httpSocket,
    socksSocket,
    browser: async () => {
      browser ??= startBrowserProxy(policy);
      return (await browser).endpoint;
    },
    close: async () => {
      const browserServer = await browser?.then((started) => started.server, () => undefined);
      httpListener.close();
      await closeAll(browserServer ? [http, browserServer] : [http], socks, folder);
    },
  };
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
}

/**
 * A Unix-socket listener that hands each connection to proxy-chain's HTTP server, as Node lets a
 * caller inject connections into one. proxy-chain drops a connection without a remote address (a
 * guard against sockets closed before they were seen), and a Unix socket has none: each is named
 * for what it is.
 */
function unixListenerFor(proxy: HttpProxyServer): Server {
  return createNetServer((socket) => {
    Object.defineProperty(socket, 'remoteAddress', { value: 'unix-socket' });
    proxy.server.emit('connection', socket);
  });
}

/** The library's own net.Server, which it keeps private but listens with. */
function socksNetServer(socks: Socks5Server): Server {
  return (socks as unknown as { server: Server }).server;
}

async function startBrowserProxy(policy: EgressPolicy): Promise<{ server: HttpProxyServer; endpoint: { server: string; username: string; password: string } }> {
  const username = 'manus';
  const password = randomBytes(24).toString('hex');
  const server = new HttpProxyServer({ port: 0, host: '127.0.0.1', prepareRequestFunction: prepareRequest(policy, 'browser', { username, password }) });
  await server.listen();
  return { server, endpoint: { server: `http://127.0.0.1:${server.port}`, username, password } };
}

/** proxy-chain's hook before each request: the credential, the name on the list, then the addresses. */
function prepareRequest(policy: EgressPolicy, via: ConnectionRefusal['via'], credential?: { username: string; password: string }): PrepareRequestFunction {
  return async ({ hostname, port, username, password }) => {
    if (credential && !(sameText(username, credential.username) && sameText(password, credential.password))) {
      return { requestAuthentication: true, failMsg: 'this proxy belongs to one run of manus and wants its credential' };
    }
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    if (!policy.allows(host, port)) {
      throw new RequestError(`${policy.refuse({ host, port, via, reason: 'not-listed' }).message}\n`, 403);
    }
    let addresses: LookupAddress[];
    try {
      addresses = await policy.resolve(host, port, via);
    } catch (error) {
      if (PrivateAddressError.isInstance(error)) throw new RequestError(`${refusalText(error)}\n`, 403);
      throw new RequestError(`could not resolve ${host}: ${(error as Error).message}\n`, 502);
    }
    return { dnsLookup: fixedLookup(addresses) as never };
  };
}

function refusalText(error: PrivateAddressError): string {
  return `connection to ${error.host} refused: it resolves to the private address ${error.address}, which only network.allow_private: true in your own configuration allows`;
}

/** The SOCKS5 side: the same checks, then a connection to the first checked address. */
function socksServer(policy: EgressPolicy): Socks5Server {
  const server = new Socks5Server();
  server.setRulesetValidator(async (connection) => {
    const host = connection.destAddress;
    if (!policy.allows(host, connection.destPort)) {
      policy.refuse({ host, port: connection.destPort, via: 'sandbox', reason: 'not-listed' });
      return false;
    }
    try {
      const [first] = await policy.resolve(host, connection.destPort, 'sandbox');
      connection.metadata.address = first.address;
      return true;
    } catch {
      return false;
    }
  });
  server.setConnectionHandler((connection, sendStatus) => {
    connection.destAddress = connection.metadata.address as string;
    return defaultConnectionHandler(connection, sendStatus);
  });
  return server;
}

/** A lookup that answers the addresses already checked, so the connection cannot meet a second DNS answer. */
function fixedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = typeof options.family === 'number' ? options.family : 0;
    const matching = addresses.filter((each) => family === 0 || each.family === family);
    const answer = matching.length > 0 ? matching : addresses;
    if (options.all) (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, answer);
    else callback(null, answer[0].address, answer[0].family);
  };
}

function sameText(given: string, expected: string): boolean {
  const first = Buffer.from(given ?? '');
  const second = Buffer.from(expected);
  return first.length === second.length && timingSafeEqual(first, second);
}

async function closeAll(servers: HttpProxyServer[], socks: Socks5Server, folder: string): Promise<void> {
  await Promise.all(servers.map((server) => server.close(true).catch(() => undefined)));
  await new Promise<void>((resolve) => socks.close(() => resolve()));
  await rm(folder, { recursive: true, force: true });
}
