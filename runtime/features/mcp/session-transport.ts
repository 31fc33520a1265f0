/**
 * MCP over the pipes of a sandbox session: the same newline-delimited JSON-RPC that the SDK's
 * stdio transport speaks, with the process started by a sandbox (bubblewrap, Docker or the host's
 * contained process groups), so it is recorded, confined and killed with the run.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { setTimeout as delay } from 'node:timers/promises';
import type { SandboxSession } from '../../contract/sandbox-types.js';

/** Most bytes of a server's stderr kept for the error that names why it failed. */
const stderrLimit = 4000;
const exitWaitMs = 200;

export class SessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  private stderrTail = '';
  private closed = false;

  constructor(private readonly session: SandboxSession) {}

  async start(): Promise<void> {
    const { session } = this;
    session.stdout.on('data', (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
      } catch (error) {
        this.onerror?.(error as Error);
        return;
      }
      this.readMessages();
    });
    session.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.stderrTail = (this.stderrTail + text).slice(-stderrLimit);
    });
    session.stdin.on('error', (error: Error) => this.onerror?.(error));
    void session.exited.then(() => this.finish());
  }

  /** What the server wrote to stderr last: the reason a failed start gives. */
  get stderr(): string {
    return this.stderrTail.trim();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the MCP server is not running');
    await new Promise<void>((resolve, reject) => {
      this.session.stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** What the server wrote to stderr once it has exited, or after a short wait if it has not. */
  async stderrAfterExit(): Promise<string> {
    await Promise.race([this.session.exited, delay(exitWaitMs)]);
    return this.stderr;
  }

  async close(): Promise<void> {
    await this.session.kill();
    this.finish();
  }

  private readMessages(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}
