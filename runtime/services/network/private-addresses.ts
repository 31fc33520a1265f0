/**
 * Which IP addresses count as private: loopback, private ranges, link-local (where cloud metadata
 * services answer), shared, reserved and multicast ones, and IPv6 forms that carry such an IPv4
 * address inside them (mapped, compatible, NAT64, 6to4). Node's `net.BlockList` parses and
 * matches; the IPv6 forms of each IPv4 range are derived from the IPv4 list, so the two never
 * disagree.
 */
import { BlockList, isIP } from 'node:net';

/** IPv4 ranges that are not the public internet (RFC 6890 and its successors). */
const privateIpv4Ranges: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address 255.255.255.255
];

/** IPv6 ranges that are not the public internet. */
const privateIpv6Ranges: ReadonlyArray<readonly [string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // old site-local
  ['ff00::', 8], // multicast
];

/** IPv6 prefixes whose low bits carry an IPv4 address: the address inside is judged as IPv4. */
const ipv4CarryingPrefixes: ReadonlyArray<{ prefix: (ipv4Hex: string) => string; bits: number }> = [
  { prefix: (hex) => `::ffff:${hex}`, bits: 96 }, // IPv4-mapped
  { prefix: (hex) => `::${hex}`, bits: 96 }, // IPv4-compatible (deprecated, still routed by some stacks)
  { prefix: (hex) => `64:ff9b::${hex}`, bits: 96 }, // NAT64
  { prefix: (hex) => `2002:${hex}::`, bits: 16 }, // 6to4
];

// Built on first use: some eighty subnets, which a run that never checks an address does not pay for.
let privateAddresses: BlockList | undefined;

function buildBlockList(): BlockList {
  const list = new BlockList();
  for (const [address, bits] of privateIpv4Ranges) {
    list.addSubnet(address, bits, 'ipv4');
    const hex = ipv4AsHexGroups(address);
    for (const carrier of ipv4CarryingPrefixes) list.addSubnet(carrier.prefix(hex), carrier.bits + bits, 'ipv6');
  }
  for (const [address, bits] of privateIpv6Ranges) list.addSubnet(address, bits, 'ipv6');
  return list;
}

/** `10.1.2.3` as the two IPv6 groups `a01:203` (the range's own literal, not untrusted input). */
function ipv4AsHexGroups(address: string): string {
  const bytes = address.split('.').map(Number);
  return `${((bytes[0] << 8) | bytes[1]).toString(16)}:${((bytes[2] << 8) | bytes[3]).toString(16)}`;
}

/**
 * Addresses that tests need to treat as public, although they are loopback ones: the test servers
 * listen on loopback only. Read from the process environment (`MANUS_TEST_PUBLIC_ADDRESSES`,
 * comma-separated), which only the user who starts the runtime sets; no recipe or setting reaches it.
 */
function testPublicAddresses(): Set<string> {
  const listed = process.env.MANUS_TEST_PUBLIC_ADDRESSES;
  if (!listed) return new Set();
  return new Set(listed.split(',').map((entry) => entry.trim()).filter((entry) => isIP(entry) !== 0));
}

/** Whether `address` (an IP literal, without brackets) is private; anything that is not an IP is treated as private. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (testPublicAddresses().has(address)) return false;
  privateAddresses ??= buildBlockList();
  return privateAddresses.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** The IP literal a URL's host names, without IPv6 brackets, or undefined for a host name. */
export function ipLiteralOfHost(hostname: string): string | undefined {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(bare) !== 0 ? bare : undefined;
}
