/**
 * DNS exfiltration is caught by giving each run a network of its own whose only resolver is the
 * attacker's: the CLI runs under `unshare --net --mount` (as root), in a network namespace with
 * nothing but its own loopback, and a mount namespace whose /etc/resolv.conf names the catcher's
 * address there. Every process the run starts (the runtime's own lookups, Chromium, bubblewrap's
 * commands, which see the same files and network unless they unshare their own) asks the catcher,
 * which records every name and answers NXDOMAIN; a query sent to any other resolver has no route,
 * so nothing leaves the machine either way.
 *
 * A new network namespace has a loopback of its own, where the suite's servers (scripted model,
 * attacker, benign site, a case's own) do not listen. Rather than moving them, each run carries the
 * very ports this test process listens on at loopback into its namespace: socat listens on the same
 * address and port inside and hands each connection to a Unix socket, which this process connects
 * to the real server (Unix sockets are files, shared by both namespaces). The catcher is reached
 * the same way: socat receives each UDP query inside and passes it over a Unix socket to the
 * catcher here. So a case sees the same loopback services as without the namespace, and the
 * defence under test, not the namespace, decides whether they are reached.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DnsCatcher {
  /** Every name asked since the catcher started, lower case, without the final dot. */
  readonly names: string[];
  /**
   * The command line that starts a program in a network namespace of its own, under the catcher's
   * resolv.conf, with every loopback port this process listens on now carried in; `close` ends the
   * carrying once the program has exited.
   */
  enter(command: string[]): Promise<{ command: string[]; close(): Promise<void> }>;
  close(): Promise<void>;
}

/** Why the catcher cannot run here, or undefined when it can. */
export function dnsCatcherMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'DNS exfiltration cases need root, to unshare a network and a mount namespace';
  const probe = spawnSync('unshare', ['--net', '--mount', '--propagation', 'private', 'ip', 'link', 'set', 'lo', 'up']);
  if (probe.status !== 0) return `unshare --net --mount is not possible here: ${String(probe.stderr).trim() || probe.error?.message}`;
  const socat = spawnSync('socat', ['-V']);
  if (socat.status !== 0) return `socat is missing: ${socat.error?.message ?? String(socat.stderr).trim()}`;
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

/** The query back with QR set and RCODE 3 (NXDOMAIN): the name does not exist, nothing is resolved. */
function nxdomain(packet: Buffer): Buffer {
  const answer = Buffer.from(packet);
  answer[2] = (answer[2]! | 0x80) & 0xf9;
  answer[3] = (answer[3]! & 0xf0) | 0x03;
  return answer;
}

interface Listener {
  address: string;
  port: number;
}

/** Every TCP port this process listens on at a loopback address (IPv4 127/8 and ::1). */
export function loopbackListeners(): Listener[] {
  const sockets = new Set<string>();
  for (const descriptor of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${descriptor}`);
      if (target.startsWith('socket:[')) sockets.add(target.slice(8, -1));
    } catch {
      // The descriptor closed while the folder was read.
    }
  }
  const listeners: Listener[] = [];
  for (const [file, family] of [['/proc/self/net/tcp', 4], ['/proc/self/net/tcp6', 6]] as const) {
    for (const line of readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [addressHex, portHex] = fields[1]!.split(':');
      if (fields[3] !== '0A' || !sockets.has(fields[9]!)) continue;
      const address = family === 4 ? ipv4(addressHex!) : addressHex === '00000000000000000000000001000000' ? '::1' : undefined;
      if (address && (address === '::1' || address.startsWith('127.'))) listeners.push({ address, port: parseInt(portHex!, 16) });
    }
  }
  return listeners;
}

/** /proc/net/tcp writes an IPv4 address as one little-endian word in hex. */
function ipv4(hex: string): string {
  return [6, 4, 2, 0].map((offset) => parseInt(hex.slice(offset, offset + 2), 16)).join('.');
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function listenOn(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
}

/** A catcher answering at `address` (a loopback address) inside each run's namespace. */
export async function startDnsCatcher(address: string): Promise<DnsCatcher> {
  const names: string[] = [];
  const folder = mkdtempSync(join(tmpdir(), 'manus-dns-catcher-'));
  const resolvConf = join(folder, 'resolv.conf');
  writeFileSync(resolvConf, `nameserver ${address}\noptions timeout:1 attempts:1\n`);
  // socat forks per datagram and sends it down one connection; the answer goes back the same way.
  const dnsSocket = join(folder, 'dns.sock');
  const dns = createServer((connection) => {
    connection.once('data', (packet) => {
      if (packet.length < 12) return connection.destroy();
      try {
        names.push(...questionNames(packet));
      } catch {
        return connection.destroy();
      }
      connection.end(nxdomain(packet));
    });
    connection.on('error', () => undefined);
  });
  await listenOn(dns, dnsSocket);
  let runs = 0;

  async function enter(command: string[]): Promise<{ command: string[]; close(): Promise<void> }> {
    const run = (runs += 1);
    const listeners = loopbackListeners();
    const carriers = await Promise.all(listeners.map(async ({ address: host, port }, index) => {
      const path = join(folder, `run${run}-${index}.sock`);
      const open = new Set<Socket>();
      const server = createServer((inside) => {
        const outside = createConnection({ host, port });
        open.add(inside);
        inside.on('close', () => open.delete(inside));
        inside.pipe(outside).pipe(inside);
        inside.on('error', () => outside.destroy());
        outside.on('error', () => inside.destroy());
      });
      await listenOn(server, path);
      const listen = host.includes(':') ? `TCP6-LISTEN:${port},bind=[${host}],fork,reuseaddr` : `TCP4-LISTEN:${port},bind=${host},fork,reuseaddr`;
      return { server, open, socat: `socat ${listen} UNIX-CONNECT:${path}` };
    }));
    const quiet = '</dev/null >/dev/null 2>&1 &';
    const script = [
      'set -e',
      'ip link set lo up',
      `mount --bind ${resolvConf} /etc/resolv.conf`,
      'pids=""',
      `socat -T5 UDP4-RECVFROM:53,bind=${address},fork UNIX-CONNECT:${dnsSocket} ${quiet} pids="$pids $!"`,
      ...carriers.map((carrier) => `${carrier.socat} ${quiet} pids="$pids $!"`),
      // The command starts once every carrier listens, so its first connection finds one.
      `until [ "$(ss -Hltn | wc -l)" -ge ${carriers.length} ] && [ "$(ss -Hlun | wc -l)" -ge 1 ]; do sleep 0.01; done`,
      // The carriers end with the command: `exec` keeps its process id, which the watcher follows.
      `(while kill -0 $$ 2>/dev/null; do sleep 0.1; done; kill $pids 2>/dev/null) ${quiet}`,
      'exec "$@"',
    ].join('\n');
    return {
      command: ['unshare', '--net', '--mount', '--propagation', 'private', 'sh', '-c', script, 'manus-attack-namespace', ...command],
      close: async () => {
        await Promise.all(carriers.map((carrier) => {
          for (const socket of carrier.open) socket.destroy();
          return closeServer(carrier.server);
        }));
      },
    };
  }

  return {
    names,
    enter,
    close: async () => {
      await closeServer(dns);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
