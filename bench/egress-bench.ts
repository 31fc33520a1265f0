/**
 * Measures what the egress proxy adds to a download: `curl` of a 10 MB file from a local server,
 * once through the path a sandboxed command takes (a socat bridge from a loopback port to the
 * proxy's Unix socket, then the proxy, which checks the name, resolves it and connects) and once
 * straight to the server. The two alternate, round by round, so a change in the machine's speed
 * affects both alike; the figures are medians of the wall time of each curl process. The proxy
 * runs in this process, as it runs in the runtime's. The target: at most 50 ms added.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EgressPolicy } from '../runtime/services/network/egress-policy.js';
import { RunResourceRegistry } from '../runtime/services/run-resources.js';
import { socatOptions } from '../runtime/services/sandbox/egress-bridge.js';

const rounds = Number(process.env.BENCH_REPETITIONS ?? 15);
const fileBytes = 10 * 1024 * 1024;
const bridgePort = Number(process.env.BENCH_BRIDGE_PORT ?? 13128);
const serverAddress = '127.0.0.2';
const targetAddedMs = 50;

// The test-only mapping, so the bench reaches no DNS and its loopback server counts as public.
process.env.MANUS_TEST_HOSTS = `bench.test=${serverAddress}`;
process.env.MANUS_TEST_PUBLIC_ADDRESSES = serverAddress;

function curl(args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '-f', '-o', '/dev/null', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`curl failed (${code}): ${stderr}`))));
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((first, second) => first - second);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function waitForPort(port: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const ready = await new Promise<boolean>((resolve) => {
      const probe = spawn('curl', ['-s', '-o', '/dev/null', `http://127.0.0.1:${port}/`], { stdio: 'ignore' });
      probe.on('close', (code) => resolve(code !== 7));
    });
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the bridge on port ${port} did not start`);
}

/**
 * The file server runs in a process of its own, as a remote server would: sharing this process's
 * event loop with the proxy would charge the proxy for the server's work.
 */
async function startFileServer(): Promise<{ port: number; process: ChildProcess }> {
  const source = [
    "const body = require('node:crypto').randomBytes(" + fileBytes + ");",
    "const server = require('node:http').createServer((request, response) => {",
    "  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });",
    '  response.end(body);',
    '});',
    "server.listen(0, '" + serverAddress + "', () => console.log(server.address().port));",
  ].join('\n');
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once('exit', (code) => reject(new Error(`the file server ended (${code})`)));
  });
  return { port, process: child };
}

async function main(): Promise<void> {
  const server = await startFileServer();
  const url = `http://bench.test:${server.port}/file`;
  const resources = new RunResourceRegistry();
  const policy = new EgressPolicy({ hosts: ['bench.test'], access: { allowPrivate: false }, resources, onRefused: () => undefined });
  const proxy = await policy.proxy();
  let bridge: ChildProcess | undefined;
  try {
    // As the sandbox starts it (services/sandbox/egress-bridge.ts).
    bridge = spawn('socat', [...socatOptions, `TCP-LISTEN:${bridgePort},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${proxy.httpSocket}`], { stdio: 'ignore' });
    await waitForPort(bridgePort);
    const direct = ['--noproxy', '*', '--resolve', `bench.test:${new URL(url).port}:${serverAddress}`, url];
    const proxied = ['--proxy', `http://127.0.0.1:${bridgePort}`, url];
    // One of each first, unmeasured: page cache, connection set-up, the proxy's first request.
    await curl(direct);
    await curl(proxied);
    const directMs: number[] = [];
    const proxiedMs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      directMs.push(await curl(direct));
      proxiedMs.push(await curl(proxied));
    }
    const added = median(proxiedMs) - median(directMs);
    console.log(`curl of ${fileBytes / 1024 / 1024} MB from a local server, ${rounds} alternating rounds (medians):`);
    console.log(`  direct:                          ${median(directMs).toFixed(1)} ms`);
    console.log(`  through socat and the proxy:     ${median(proxiedMs).toFixed(1)} ms`);
    console.log(`  added by the egress path:        ${added.toFixed(1)} ms (target at most ${targetAddedMs} ms)`);
    if (added > targetAddedMs) process.exitCode = 1;
  } finally {
    bridge?.kill();
    await resources.disposeAll();
    server.process.kill();
  }
}

await main();
