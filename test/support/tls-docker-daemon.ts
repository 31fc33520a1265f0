/**
 * A second Docker daemon that stands for one on another machine: it listens only on a loopback TCP
 * port, with TLS and client certificates made here by openssl, keeps its own data, exec root and
 * pid file, and holds a copy of the sandbox image loaded from the main daemon. Started and stopped
 * by its PID; `start` gives the reason instead of a daemon when it cannot run here.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processIsGone } from './processes.js';

export interface TlsDockerDaemon {
  /** tcp://127.0.0.1:<port> */
  host: string;
  /** Holds ca.pem, cert.pem and key.pem of a client the daemon trusts, as DOCKER_CERT_PATH expects. */
  clientCertificates: string;
  /** The environment a docker client needs to reach it. */
  environment: Record<string, string>;
  /** How long loading the image took, in milliseconds. */
  imageLoadMs: number;
  stop(): Promise<void>;
}

export async function startTlsDockerDaemon(image: string): Promise<TlsDockerDaemon | { reason: string }> {
  if (process.getuid?.() !== 0) return { reason: 'a second dockerd needs root' };
  if (spawnSync('dockerd', ['--version']).status !== 0) return { reason: 'dockerd is not installed' };
  if (spawnSync('openssl', ['version']).status !== 0) return { reason: 'openssl is not installed' };
  // Short: the exec root holds unix sockets, whose paths must stay under 108 bytes.
  const root = mkdtempSync(join(tmpdir(), 'mrd-'));
  const certificates = join(root, 'tls');
  const client = join(root, 'client');
  mkdirSync(certificates);
  mkdirSync(client);
  makeCertificates(certificates, client);
  const port = await freePort();
  const host = `tcp://127.0.0.1:${port}`;
  const daemon = spawn(
    'dockerd',
    [
      '--iptables=false', '--ip-forward=false', '--ip-masq=false', '--bridge=none',
      '--data-root', join(root, 'data'), '--exec-root', join(root, 'exec'), '--pidfile', join(root, 'dockerd.pid'),
      '--tlsverify', '--tlscacert', join(certificates, 'ca.pem'), '--tlscert', join(certificates, 'server-cert.pem'), '--tlskey', join(certificates, 'server-key.pem'),
      '-H', host,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  daemon.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  });
  const environment = { DOCKER_HOST: host, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: client };
  const stop = () => stopDaemon(daemon, root);
  const cli = (...arguments_: string[]) => spawnSync('docker', arguments_, { env: { ...process.env, ...environment }, encoding: 'utf8' });
  for (let attempt = 0; cli('version').status !== 0; attempt += 1) {
    if (daemon.exitCode !== null || attempt > 60) {
      await stop();
      return { reason: `dockerd on ${host} did not start: ${log.trim().split('\n').slice(-3).join(' | ')}` };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const started = performance.now();
  const load = spawnSync('sh', ['-c', `docker save "$1" | DOCKER_HOST="$2" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$3" docker load`, 'load', image, host, client], {
    encoding: 'utf8',
    maxBuffer: 1024 * 1024,
  });
  if (load.status !== 0) {
    await stop();
    return { reason: `the image ${image} could not be loaded into the second daemon: ${load.stderr.trim()}` };
  }
  return { host, clientCertificates: client, environment, imageLoadMs: Math.round(performance.now() - started), stop };
}

function makeCertificates(folder: string, client: string): void {
  const openssl = (...arguments_: string[]) => execFileSync('openssl', arguments_, { cwd: folder, stdio: 'pipe' });
  const key = (name: string) => openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', name);
  key('ca-key.pem');
  openssl('req', '-x509', '-new', '-key', 'ca-key.pem', '-subj', '/CN=manus test CA', '-days', '1', '-out', 'ca.pem');
  const sign = (name: string, subject: string, extensions: string) => {
    key(`${name}-key.pem`);
    openssl('req', '-new', '-key', `${name}-key.pem`, '-subj', subject, '-out', `${name}.csr`);
    writeFileSync(join(folder, `${name}.ext`), extensions);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-days', '1', '-extfile', `${name}.ext`, '-out', `${name}-cert.pem`);
  };
  sign('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  sign('client', '/CN=manus test client', 'extendedKeyUsage=clientAuth\n');
  execFileSync('cp', [join(folder, 'ca.pem'), join(client, 'ca.pem')]);
  execFileSync('cp', [join(folder, 'client-cert.pem'), join(client, 'cert.pem')]);
  execFileSync('cp', [join(folder, 'client-key.pem'), join(client, 'key.pem')]);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function stopDaemon(daemon: ChildProcess, root: string): Promise<void> {
  const pid = daemon.pid;
  if (pid !== undefined && daemon.exitCode === null) {
    daemon.kill('SIGTERM');
    for (let waited = 0; !processIsGone(pid) && waited < 150; waited += 1) await new Promise((resolve) => setTimeout(resolve, 100));
    if (!processIsGone(pid)) daemon.kill('SIGKILL');
  }
  rmSync(root, { recursive: true, force: true });
}
