/**
 * Name resolution that refuses private addresses, used as the `lookup` of the connections that web
 * tools and MCP clients open. The check and the connection use one and the same answer: a second,
 * different DNS answer (rebinding) can never slip in between them, because there is no second
 * lookup.
 */
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { PrivateAddressError } from './network-errors.js';
import { isPrivateAddress } from './private-addresses.js';

/** What the user allows the runtime's own connections to reach. */
import type { NetworkAccess } from '../../config/types.js';

export type { NetworkAccess };

export const defaultNetworkAccess: NetworkAccess = Object.freeze({ allowPrivate: false });

/** Refuses an address the access does not allow. */
export function checkAddress(host: string, address: string, access: NetworkAccess): void {
  if (!access.allowPrivate && isPrivateAddress(address)) throw new PrivateAddressError(host, address);
}

/**
 * Resolves every address of `hostname` and refuses the name if any of them is private: a name that
 * answers both public and private addresses is not one to trust with either.
 */
export function guardedLookup(access: NetworkAccess): LookupFunction {
  return (hostname, options, callback) => {
    checkLoopbackName(hostname, access)
      .then(() => resolveAll(hostname, options.family))
      .then((addresses) => {
        for (const each of addresses) checkAddress(hostname, each.address, access);
        if (addresses.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
        if (options.all) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}

/**
 * `localhost` and its subdomains are loopback whatever a resolver answers (RFC 6761), and
 * `localhost.` with its trailing dot is the same name; refused before any lookup.
 */
async function checkLoopbackName(hostname: string, access: NetworkAccess): Promise<void> {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) checkAddress(hostname, '127.0.0.1', access);
}

function resolveAll(hostname: string, family: number | string | undefined): Promise<LookupAddress[]> {
  const familyNumber = family === 'IPv4' ? 4 : family === 'IPv6' ? 6 : typeof family === 'number' ? family : 0;
  const mapped = testHostAnswer(hostname);
  if (mapped) return Promise.resolve(mapped.filter((each) => familyNumber === 0 || each.family === familyNumber));
  // node:dns loads with the first name to resolve: a run that reaches only addresses never loads it.
  return import('node:dns').then(({ lookup }) => new Promise((resolve, reject) => {
    lookup(hostname, { all: true, family: familyNumber, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  }));
}

const testAnswerCounts = new Map<string, number>();

/**
 * For tests only, since no test may reach real DNS: `MANUS_TEST_HOSTS` maps names to addresses,
 * `name=address,address;other=address`. Answers separated by `|` are given in turn, one per lookup,
 * the last one repeating: `rebind.test=127.0.0.2|127.0.0.1` plays a rebinding DNS server. Read
 * from the process environment only, which the user who starts the runtime sets; no recipe or
 * setting reaches it.
 */
function testHostAnswer(hostname: string): LookupAddress[] | undefined {
  const table = process.env.MANUS_TEST_HOSTS;
  if (!table) return undefined;
  const name = hostname.toLowerCase().replace(/\.$/, '');
  for (const entry of table.split(';')) {
    const [entryName, answersText] = entry.split('=', 2).map((part) => part?.trim());
    if (!answersText || entryName?.toLowerCase() !== name) continue;
    const answers = answersText.split('|');
    const count = testAnswerCounts.get(name) ?? 0;
    testAnswerCounts.set(name, count + 1);
    const answer = answers[Math.min(count, answers.length - 1)];
    return answer
      .split(',')
      .map((address) => address.trim())
      .filter((address) => isIP(address) !== 0)
      .map((address) => ({ address, family: isIP(address) }));
  }
  return undefined;
}

/**
 * Every address of a host (an IP literal is its own), refusing the host if any is private unless
 * the access allows it: the egress proxy connects to exactly these, resolving nothing again.
 */
export async function resolveCheckedHost(hostname: string, access: NetworkAccess): Promise<LookupAddress[]> {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare);
  const addresses = family !== 0 ? [{ address: bare, family }] : await checkLoopbackName(bare, access).then(() => resolveAll(bare, undefined));
  for (const each of addresses) checkAddress(hostname, each.address, access);
  if (addresses.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
  return addresses;
}

/**
 * Refuses a host that is, or resolves to, a private address: for callers that cannot connect
 * through `guardedLookup` (the browser resolves names itself), and so cannot stop a rebinding.
 */
export async function checkHost(hostname: string, access: NetworkAccess): Promise<void> {
  if (access.allowPrivate) return;
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) !== 0) return checkAddress(bare, bare, access);
  await checkLoopbackName(bare, access);
  for (const each of await resolveAll(bare, undefined)) checkAddress(hostname, each.address, access);
}
