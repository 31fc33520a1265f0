import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

/** Why Redis tests cannot run here, or undefined when redis-server is installed. */
export function redisMissing(): string | undefined {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return found.status === 0 ? undefined : 'redis-server is not installed (apt-get install redis-server); the queue tests are skipped';
}

export interface RedisServer {
  port: number;
  url: string;
  pid: number;
  /** Stops it (SIGTERM, by its pid) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (its data survives only with `persistDirectory`). */
  restart(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether the server answers: PONG, or the NOAUTH a password-protected one gives. */
async function answers(port: number, tls?: RedisTls): Promise<boolean> {
  return new Promise((resolve) => {
    const ask = (socket: Socket) => {
      socket.write('PING\r\n');
      socket.once('data', (data) => {
        socket.destroy();
        resolve(/^(\+PONG|-NOAUTH)/.test(data.toString()));
      });
    };
    if (tls) {
      const socket = connectTls({ port, host: '127.0.0.1', ca: readFileSync(tls.certificateFile) }, () => ask(socket));
      socket.once('error', () => resolve(false));
      return;
    }
    const socket = new Socket();
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1', () => ask(socket));
  });
}

export interface RedisTls {
  /** A certificate for 127.0.0.1, which clients also take as their certificate authority. */
  certificateFile: string;
  keyFile: string;
}

/**
 * A redis-server of the test's own on a free loopback port, started and stopped by its pid; with
 * `tls`, it speaks only TLS on that port (its URL is rediss://), and with `password` it asks for one.
 */
export async function startRedis(options: { persistDirectory?: string; tls?: RedisTls; password?: string } = {}): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess;
  const launch = async () => {
    const persistence = options.persistDirectory
      ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.persistDirectory, '--save', '']
      : ['--save', '', '--appendonly', 'no'];
    const listening = options.tls
      ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', options.tls.certificateFile, '--tls-key-file', options.tls.keyFile, '--tls-auth-clients', 'no']
      : ['--port', String(port)];
    const password = options.password ? ['--requirepass', options.password] : [];
    child = spawn('redis-server', [...listening, '--bind', '127.0.0.1', ...password, ...persistence, '--daemonize', 'no'], { stdio: 'ignore' });
    for (let tries = 0; tries < 200; tries += 1) {
      if (await answers(port, options.tls)) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`redis-server did not start on port ${port}`);
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid!, 'SIGTERM');
    await exited;
  };
  await launch();
  return {
    port,
    url: `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}/0`,
    get pid() {
      return child.pid!;
    },
    stop,
    restart: launch,
  };
}
