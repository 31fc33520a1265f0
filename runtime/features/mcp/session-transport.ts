/**
 * MCP over the pipes of a sandbox session: the same newline-delimited JSON-RPC that the SDK's
 * stdio transport speaks, with the process started by a sandbox (bubblewrap, Docker or the host's
 * contained process groups), so it is recorded, confined and killed with the run. A line longer
 * than the server's `max_result_mb` is cut off as it arrives (see result-limit.ts); lines are
 * gathered as a list of chunks, so a long one costs one copy, not one per chunk.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { setTimeout as delay } from 'node:timers/promises';
import type { SandboxSession } from '../../contract/sandbox-types.js';
import { idOfCutMessage, keptEdgeBytes, oversizedReply, PendingRequests } from './result-limit.js';

/** Most bytes of a server's stderr kept for the error that names why it failed. */
const stderrLimit = 4000;
const exitWaitMs = 200;

export class SessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private line: Buffer[] = [];
  private lineBytes = 0;
  /** Set while the rest of a line too long to keep is skipped: its kept start and end. */
  private cut?: { head: Buffer; tail: Buffer };
  private readonly pending = new PendingRequests();
  private stderrTail = '';
  private closed = false;

  constructor(
    private readonly session: SandboxSession,
    private readonly limit: { server: string; maxBytes: number },
  ) {}

  async start(): Promise<void> {
    const { session } = this;
    session.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
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
    this.pending.sent(message);
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

  private receive(chunk: Buffer): void {
    let rest = chunk;
    for (;;) {
      const end = rest.indexOf(0x0a);
      const part = end === -1 ? rest : rest.subarray(0, end);
      this.take(part);
      if (end === -1) return;
      this.endLine();
      rest = rest.subarray(end + 1);
    }
  }

  /** Adds bytes to the current line, or, past the limit, keeps only its start and end. */
  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.cut) {
      this.cut.tail = Buffer.concat([this.cut.tail, part]).subarray(-keptEdgeBytes);
      return;
    }
    this.line.push(part);
    this.lineBytes += part.length;
    if (this.lineBytes <= this.limit.maxBytes) return;
    const whole = Buffer.concat(this.line);
    this.cut = { head: whole.subarray(0, keptEdgeBytes), tail: Buffer.from(whole.subarray(-keptEdgeBytes)) };
    this.line = [];
    this.lineBytes = 0;
  }

  private endLine(): void {
    if (this.cut) {
      const { head, tail } = this.cut;
      this.cut = undefined;
      const id = idOfCutMessage(head.toString('utf8'), tail.toString('utf8'), this.pending);
      if (id === undefined) {
        this.onerror?.(new Error(`the MCP server '${this.limit.server}' sent a message larger than max_result_mb that answers no known request; it was dropped`));
        return;
      }
      this.deliver(oversizedReply(id, this.pending.get(id), this.limit.server, this.limit.maxBytes));
      return;
    }
    const text = Buffer.concat(this.line, this.lineBytes).toString('utf8').replace(/\r$/, '');
    this.line = [];
    this.lineBytes = 0;
    if (!text.trim()) return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    this.deliver(message);
  }

  private deliver(message: JSONRPCMessage): void {
    this.pending.received(message);
    this.onmessage?.(message);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.line = [];
    this.cut = undefined;
    this.onclose?.();
  }
}
