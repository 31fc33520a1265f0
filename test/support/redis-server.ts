import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Socket } from 'node:net';

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

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1', () => {
      socket.write('PING\r\n');
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
    });
  });
}

/** A redis-server of the test's own on a free loopback port, started and stopped by its pid. */
export async function startRedis(options: { persistDirectory?: string } = {}): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess;
  const launch = async () => {
    const persistence = options.persistDirectory
      ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.persistDirectory, '--save', '']
      : ['--save', '', '--appendonly', 'no'];
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...persistence, '--daemonize', 'no'], { stdio: 'ignore' });
    for (let tries = 0; tries < 200; tries += 1) {
      if (await answers(port)) return;
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
    url: `redis://127.0.0.1:${port}/0`,
    get pid() {
      return child.pid!;
    },
    stop,
    restart: launch,
  };
}
