/**
 * The fetch of the runtime's connections on the model's behalf (web tools, HTTP MCP servers named
 * by recipes): a URL naming a private IP is refused before it is sent, a name is resolved by
 * `guardedLookup` when the connection opens, and both hold for every redirect, since each hop
 * opens its connection the same way.
 */
import { createHttpFetch, type FetchFunction } from '../model/http-fetch.js';
import { checkAddress, guardedLookup, type NetworkAccess } from './guarded-lookup.js';
import { ipLiteralOfHost } from './private-addresses.js';

const fetches = new Map<string, FetchFunction>();

/** A fetch holding its connections to what `access` allows; bodies stay streams, for the caller to cap. */
export function guardedFetch(access: NetworkAccess): FetchFunction {
  const key = access.allowPrivate ? 'private' : 'public';
  let fetch = fetches.get(key);
  if (!fetch) {
    const frozen: NetworkAccess = { allowPrivate: access.allowPrivate };
    fetch = createHttpFetch({ lookup: guardedLookup(frozen), checkUrl: (url) => checkUrlAddress(url, frozen) });
    fetches.set(key, fetch);
  }
  return fetch;
}

/**
 * Refuses a URL whose host is a private IP literal. Connections to a literal never call the lookup,
 * so literals are checked here; WHATWG URL parsing has already turned `2130706433`, `0177.0.0.1`,
 * `0x7f.1` and `127.1` into `127.0.0.1`.
 */
export function checkUrlAddress(url: URL, access: NetworkAccess): void {
  const literal = ipLiteralOfHost(url.hostname);
  if (literal) checkAddress(literal, literal, access);
}
