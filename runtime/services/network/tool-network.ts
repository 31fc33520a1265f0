/**
 * What a tool's context offers for reaching the network on the model's behalf, bound to what the
 * user allows: every tool gets the same guard without importing it. With an egress policy (a run
 * that may reach only named hosts), its fetch also refuses every host the list does not name,
 * for the first URL and every redirect; with the user's `network.only`, so does the fetch of the
 * user's own servers.
 */
import type { ToolNetwork } from '../../contract/tool-network.js';
import { createHttpFetch } from '../model/http-fetch.js';
import type { EgressPolicy } from './egress-policy.js';
import { checkUrlAddress, guardedFetch } from './guarded-fetch.js';
import { checkHost, defaultNetworkAccess, guardedLookup, type NetworkAccess } from './guarded-lookup.js';
import { HostNotAllowedError } from './network-errors.js';

export type { ToolNetwork };

export function createToolNetwork(access: NetworkAccess = defaultNetworkAccess, egress?: EgressPolicy): ToolNetwork {
  const frozen: NetworkAccess = { allowPrivate: access.allowPrivate };
  const fetch = egress
    ? createHttpFetch({
      lookup: guardedLookup(frozen),
      checkUrl: (url) => {
        egress.checkUrl(url);
        checkUrlAddress(url, frozen);
      },
    })
    : guardedFetch(frozen);
  // The user's own servers may be anywhere, private addresses included; only their own
  // `network.only` holds them.
  const userFetch = egress && access.only ? createHttpFetch({ checkUrl: (url) => egress.checkUrlAgainstOnly(url) }) : undefined;
  // A name off the list is never looked up, not even to check it: the lookup itself would carry
  // the name (and whatever the model spelled into it) to a name server.
  const check = egress
    ? async (hostname: string) => {
      if (!egress.namesHost(hostname)) throw new HostNotAllowedError(hostname, 0, `${hostname} is not in the run's allowed hosts`);
      return checkHost(hostname, frozen);
    }
    : (hostname: string) => checkHost(hostname, frozen);
  return { allowPrivate: frozen.allowPrivate, fetch, checkHost: check, ...(egress ? { egress } : {}), ...(userFetch ? { userFetch } : {}) };
}
