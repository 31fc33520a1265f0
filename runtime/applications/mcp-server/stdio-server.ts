/**
 * MCP over stdin and stdout. stdout carries protocol messages and nothing else: whatever else
 * the process would print there (a plugin's console.log, a library's notice) goes to stderr while
 * serving. The connection ends when stdin closes, as when the client goes away.
 */
import { Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ConnectionServer } from './connection-server.js';

export interface StdioServing {
  /** Settles when the client closed stdin and everything was disposed. */
  ended: Promise<void>;
  close(): Promise<void>;
}

export async function serveStdio(connection: ConnectionServer): Promise<StdioServing> {
  const protocolOutput = reserveStdout();
  const transport = new StdioServerTransport(process.stdin, protocolOutput);
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= connection.close());
  const ended = new Promise<void>((resolve) => {
    const onEnd = () => void close().then(resolve, resolve);
    process.stdin.once('end', onEnd);
    process.stdin.once('close', onEnd);
  });
  await connection.server.connect(transport);
  return { ended, close };
}

/** A stream to the real stdout for the protocol; `process.stdout.write` itself now writes to stderr. */
function reserveStdout(): Writable {
  const write = process.stdout.write.bind(process.stdout) as (chunk: unknown, callback: (error?: Error | null) => void) => boolean;
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  return new Writable({
    write(chunk, _encoding, callback) {
      write(chunk, callback);
    },
  });
}
