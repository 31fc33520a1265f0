/**
 * DNS exfiltration is caught by giving the runtime a resolver that is the attacker's: the CLI runs
 * in a mount namespace of its own (`unshare --mount`, as root) whose /etc/resolv.conf names this
 * catcher, a UDP server on a loopback address that records every name asked and answers NXDOMAIN.
 * Every process the run starts (the runtime's own lookups, bubblewrap's commands, which see the
 * same files) asks it, so a secret spelled into a name shows in `names`. The servers of the suite
 * live on the host's loopback, so the network namespace stays the host's; the sandbox's own network
 * namespace is the defence under test.
 */
import { spawnSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DnsCatcher {
  /** Every name asked since the catcher started, lower case, without the final dot. */
  readonly names: string[];
  /** The command line that starts a program under the catcher's resolv.conf. */
  wrap(command: string[]): string[];
  close(): Promise<void>;
}

/** Why the catcher cannot run here, or undefined when it can. */
export function dnsCatcherMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'DNS exfiltration cases need root, to bind port 53 and unshare a mount namespace';
  const probe = spawnSync('unshare', ['--mount', '--propagation', 'private', 'true']);
  if (probe.status !== 0) return `unshare --mount is not possible here: ${String(probe.stderr).trim() || probe.error?.message}`;
  return undefined;
}

/** The names in a DNS query's question section (RFC 1035 4.1.2); compression never appears in a question. */
function questionNames(packet: Buffer): string[] {
  const count = packet.readUInt16BE(4);
  const names: string[] = [];
  let offset = 12;
  for (let index = 0; index < count && offset < packet.length; index += 1) {
    const labels: string[] = [];
    while (offset < packet.length && packet[offset] !== 0) {
      const length = packet[offset]!;
      labels.push(packet.subarray(offset + 1, offset + 1 + length).toString('latin1'));
      offset += 1 + length;
    }
    offset += 5;
    names.push(labels.join('.').toLowerCase());
  }
  return names;
}

/** A catcher on `address` (a loopback address of its own), port 53. */
export async function startDnsCatcher(address: string): Promise<DnsCatcher> {
  const names: string[] = [];
  const socket: Socket = createSocket('udp4');
  socket.on('message', (packet, sender) => {
    if (packet.length < 12) return;
    try {
      names.push(...questionNames(packet));
    } catch {
      return;
    }
    // The query back with QR set and RCODE 3 (NXDOMAIN): the name does not exist, nothing is resolved.
    const answer = Buffer.from(packet);
    answer[2] = (answer[2]! | 0x80) & 0xf9;
    answer[3] = (answer[3]! & 0xf0) | 0x03;
    socket.send(answer, sender.port, sender.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(53, address, () => resolve());
  });
  const folder = mkdtempSync(join(tmpdir(), 'manus-dns-catcher-'));
  const resolvConf = join(folder, 'resolv.conf');
  writeFileSync(resolvConf, `nameserver ${address}\noptions timeout:1 attempts:1\n`);
  return {
    names,
    wrap: (command) => ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolvConf, ...command],
    close: () => new Promise<void>((resolve) => socket.close(() => { rmSync(folder, { recursive: true, force: true }); resolve(); })),
  };
}
