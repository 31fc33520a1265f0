/**
 * What the two servers over HTTP (`manus mcp serve`, `manus a2a serve`, which builds on this one)
 * share: their settings, the rule that anything but loopback needs a bearer token, and listening.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../../contract/errors.js';
import type { SandboxSettings } from '../../contract/tool.js';
import type { TrustGrant } from '../../contract/trust-grants.js';
import { isLoopbackHost, type RequestGuardOptions } from './http-request-guard.js';

/** Where a server listens and who may call it, and what the runs it serves may do. */
export interface HttpServeSettings extends RequestGuardOptions {
  port: number;
  /** Host names requests may name besides the bound host. */
  allowedHosts: string[];
  trust: TrustGrant[];
  sandbox?: SandboxSettings['kind'];
  runsDirectory?: string;
  version: string;
}

/** Bound to anything but loopback, a server must be given the token its clients send. */
export function requireTokenBeyondLoopback(settings: Pick<RequestGuardOptions, 'host' | 'token'>): void {
  if (isLoopbackHost(settings.host) || settings.token) return;
  throw new UsageError(`serving on ${settings.host} needs a bearer token: pass --token-env NAME with the token in the environment variable NAME (or bind to 127.0.0.1)`);
}

/** Starts listening; a port in use or an address that cannot be bound rejects. */
export async function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}
