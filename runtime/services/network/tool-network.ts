/**
 * What a tool's context offers for reaching the network on the model's behalf, bound to what the
 * user allows: every tool gets the same guard without importing it.
 */
import type { FetchFunction } from '../model/http-fetch.js';
import { guardedFetch } from './guarded-fetch.js';
import { checkHost, defaultNetworkAccess, type NetworkAccess } from './guarded-lookup.js';

export interface ToolNetwork {
  /** The user allows loopback, private, link-local and metadata addresses (`network.allow_private`). */
  readonly allowPrivate: boolean;
  /**
   * A fetch whose connections refuse private addresses unless allowed: IP literals before sending,
   * names as they are resolved for the connection (so a second DNS answer cannot differ from the
   * one checked), and the same for every redirect. A refusal fails with code `network_private_address`.
   * Bodies stay streams, for the caller to cap.
   */
  fetch: FetchFunction;
  /** Refuses a host that is, or resolves to, a private address; for clients that resolve names themselves. */
  checkHost(hostname: string): Promise<void>;
}

export function createToolNetwork(access: NetworkAccess = defaultNetworkAccess): ToolNetwork {
  const frozen: NetworkAccess = { allowPrivate: access.allowPrivate };
  return { allowPrivate: frozen.allowPrivate, fetch: guardedFetch(frozen), checkHost: (hostname) => checkHost(hostname, frozen) };
}
