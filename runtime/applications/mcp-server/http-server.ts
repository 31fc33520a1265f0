/**
 * Streamable HTTP at `/mcp`. Each client session (started by an initialize request) gets its own
 * transport and connection server, so one client's tools, shells and browsers are not another's;
 * the session ends when the client deletes it or the server stops. Every request passes the guard
 * (Host, Origin, bearer token) before the transport sees it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ConnectionServer } from './connection-server.js';
import { createRequestGuard, type RequestGuardOptions } from './http-request-guard.js';
import { listen } from './http-serving.js';

export const mcpPath = '/mcp';

/** Larger bodies are refused: tool arguments are small, and memory is not the client's to fill. */
const maximumBodyBytes = 4 * 1024 * 1024;

export interface HttpServing {
  url: string;
  close(): Promise<void>;
}

export async function serveHttp(newConnection: () => ConnectionServer, options: RequestGuardOptions & { port: number }): Promise<HttpServing> {
  const guard = createRequestGuard(options);
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; connection: ConnectionServer }>();

  const endSession = async (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    await session.connection.close();
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== mcpPath) return reply(response, 404, -32000, `Not found: the MCP endpoint is ${mcpPath}`);
    const verdict = guard(request.headers);
    if (!verdict.allowed) {
      if (verdict.status === 401) response.setHeader('WWW-Authenticate', 'Bearer');
      return reply(response, verdict.status, -32000, verdict.message);
    }
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    if (body instanceof Error) return reply(response, 400, -32700, `Parse error: ${body.message}`);
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session) return reply(response, 404, -32001, 'Session not found');
      await session.transport.handleRequest(request, response, body);
      return;
    }
    if (request.method !== 'POST' || !isInitializeRequest(body)) {
      return reply(response, 400, -32000, 'Bad Request: no session; start one with an initialize request');
    }
    const connection = newConnection();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, connection });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) void endSession(transport.sessionId);
    };
    await connection.server.connect(transport);
    await transport.handleRequest(request, response, body);
    // An initialize request the transport refused started no session: nothing will close it later.
    if (!transport.sessionId || !sessions.has(transport.sessionId)) await connection.close();
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) reply(response, 500, -32603, `Internal error: ${error instanceof Error ? error.message : String(error)}`);
      else response.end();
    });
  });
  const address = await listen(server, options.port, options.host);
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}${mcpPath}`,
    async close() {
      await Promise.allSettled([...sessions.keys()].map(endSession));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function reply(response: ServerResponse, status: number, code: number, message: string): void {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maximumBodyBytes) {
        resolve(new Error('the request body is too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (error) {
        resolve(error instanceof Error ? error : new Error(String(error)));
      }
    });
    request.on('error', (error) => resolve(error));
  });
}
