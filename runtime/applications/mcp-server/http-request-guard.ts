/**
 * Who may talk to the HTTP server. A page in a browser can reach a server on the user's machine by
 * DNS rebinding (its own name made to resolve to 127.0.0.1), so the Host header must name the
 * server as it was bound, and a browser's Origin, when sent, must be that same host. Bound to
 * anything but loopback, every request must also carry the bearer token.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';

export interface RequestGuardOptions {
  /** The address the server listens on. */
  host: string;
  /** Host names (no port) requests may name besides the bound one. */
  allowedHosts: readonly string[];
  /** The bearer token every request must carry; required unless bound to loopback. */
  token?: string;
}

export type GuardVerdict = { allowed: true } | { allowed: false; status: 401 | 403; message: string };

const loopbackNames = ['localhost', '127.0.0.1', '[::1]', '::1'];

export function isLoopbackHost(host: string): boolean {
  return loopbackNames.includes(host) || (isIP(host) === 4 && host.startsWith('127.'));
}

function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

export function createRequestGuard(options: RequestGuardOptions): (headers: IncomingHttpHeaders) => GuardVerdict {
  const bound = isIP(options.host) === 6 ? `[${options.host}]` : options.host;
  const names = new Set(options.allowedHosts.map((name) => name.toLowerCase()));
  if (isLoopbackHost(options.host)) for (const name of loopbackNames) names.add(name);
  else if (!isWildcardHost(options.host)) names.add(bound.toLowerCase());
  // Bound to every address with no names given, any Host may arrive; the token is then the guard.
  const checkHost = names.size > 0;
  const expected = options.token === undefined ? undefined : Buffer.from(`Bearer ${options.token}`);

  return (headers) => {
    const host = headers.host;
    const hostName = host === undefined ? undefined : hostNameOf(`http://${host}`);
    if (hostName === undefined) return { allowed: false, status: 403, message: `Invalid Host header: ${String(host)}` };
    if (checkHost && !names.has(hostName)) return { allowed: false, status: 403, message: `Invalid Host: ${hostName}` };
    const origin = headers.origin;
    // A browser names the page's origin; only a page served by this very host may call.
    if (origin !== undefined && origin !== 'null' && hostNameOf(origin) !== hostName) {
      return { allowed: false, status: 403, message: `Invalid Origin: ${origin}` };
    }
    if (origin === 'null') return { allowed: false, status: 403, message: 'Invalid Origin: null' };
    if (expected) {
      const given = Buffer.from(headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return { allowed: false, status: 401, message: 'Unauthorized: a valid bearer token is required' };
      }
    }
    return { allowed: true };
  };
}

function hostNameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}
