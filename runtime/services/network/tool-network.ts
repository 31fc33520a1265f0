/**
 * What a tool's context offers for reaching the network on the model's behalf, bound to what the
 * user allows: every tool gets the same guard without importing it.
 */
import type { ToolNetwork } from '../../contract/tool-network.js';
import { guardedFetch } from './guarded-fetch.js';
import { checkHost, defaultNetworkAccess, type NetworkAccess } from './guarded-lookup.js';

export type { ToolNetwork };

export function createToolNetwork(access: NetworkAccess = defaultNetworkAccess): ToolNetwork {
  const frozen: NetworkAccess = { allowPrivate: access.allowPrivate };
  return { allowPrivate: frozen.allowPrivate, fetch: guardedFetch(frozen), checkHost: (hostname) => checkHost(hostname, frozen) };
}
