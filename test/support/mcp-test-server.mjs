#!/usr/bin/env node
/**
 * An MCP server for the tests, written with the SDK and spoken to over stdio: text, image,
 * failing, slow and crashing tools, a tool list that changes, a sampling request and an
 * elicitation request. Plain JavaScript, so it starts as fast (and as sandboxed) as any program.
 * MCP_TEST_CRASH_FILE: `crash` writes this file before exiting, and a start that finds it fails,
 * so a restart after a crash can be made to fail. MCP_TEST_TOOL_NAME: one more tool of that name,
 * answering with its name and MCP_TEST_LABEL. MCP_TEST_HUGE_MB: the tool `huge` answers that many
 * megabytes of text. MCP_TEST_HTTP: serve Streamable HTTP on 127.0.0.1 instead of stdio, on a
 * free port written to stderr as `listening on <port>`; `json` answers with JSON, `sse` with
 * event streams.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const crashFile = process.env.MCP_TEST_CRASH_FILE;
if (crashFile && existsSync(crashFile)) {
  process.stderr.write('refusing to start after a crash\n');
  process.exit(3);
}

const server = new McpServer({ name: 'test-server', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
// A 1x1 transparent PNG.
const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

server.registerTool('echo', { description: 'Echoes the text back.', inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: 'text', text: `echo: ${text}` }],
}));
server.registerTool('environment', { description: 'Prints an environment variable and the working folder.', inputSchema: { name: z.string() } }, async ({ name }) => ({
  content: [{ type: 'text', text: `${name}=${process.env[name] ?? ''} cwd=${process.cwd()}` }],
}));
server.registerTool('image', { description: 'Returns a picture.' }, async () => ({
  content: [{ type: 'text', text: 'a pixel' }, { type: 'image', data: pixel, mimeType: 'image/png' }],
}));
server.registerTool('resource', { description: 'Returns an embedded resource and structured content.' }, async () => ({
  content: [{ type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'the notes' } }],
  structuredContent: { count: 3 },
}));
server.registerTool('fail', { description: 'Always fails.' }, async () => ({ content: [{ type: 'text', text: 'it went wrong' }], isError: true }));
server.registerTool('slow', { description: 'Waits, then answers.', inputSchema: { seconds: z.number() } }, async ({ seconds }, extra) => {
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, seconds * 1000);
    extra.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      process.stderr.write('slow call cancelled\n');
      resolve(undefined);
    });
  });
  return { content: [{ type: 'text', text: 'done waiting' }] };
});
server.registerTool('crash', { description: 'Exits the server.' }, async () => {
  if (crashFile) writeFileSync(crashFile, 'crashed');
  process.exit(1);
});
server.registerTool('add_tool', { description: 'Adds the tool `added`.' }, async () => {
  server.registerTool('added', { description: 'A tool that came later.' }, async () => ({ content: [{ type: 'text', text: 'added tool answers' }] }));
  return { content: [{ type: 'text', text: 'added' }] };
});
server.registerTool('ask_model', { description: 'Asks the client\'s model.', inputSchema: { question: z.string() } }, async ({ question }) => {
  try {
    const reply = await server.server.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: question } }], maxTokens: 100 });
    return { content: [{ type: 'text', text: `model said: ${reply.content.type === 'text' ? reply.content.text : reply.content.type}` }] };
  } catch (error) {
    return { content: [{ type: 'text', text: `sampling failed: ${error.message}` }], isError: true };
  }
});
server.registerTool('ask_user', { description: 'Asks the user for a colour.' }, async () => {
  const reply = await server.server.elicitInput({
    message: 'Which colour?',
    requestedSchema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] },
  });
  return { content: [{ type: 'text', text: `user ${reply.action}${reply.content ? `: ${reply.content.colour}` : ''}` }] };
});

if (process.env.MCP_TEST_TOOL_NAME) {
  const name = process.env.MCP_TEST_TOOL_NAME;
  server.registerTool(name, { description: `The tool ${name}.` }, async () => ({ content: [{ type: 'text', text: `tool ${name} of ${process.env.MCP_TEST_LABEL ?? 'the test server'}` }] }));
}
server.registerTool('huge', { description: 'Answers with a very long text.' }, async () => ({
  content: [{ type: 'text', text: 'x'.repeat(Number(process.env.MCP_TEST_HUGE_MB ?? 30) * 1024 * 1024) }],
}));

if (process.env.MCP_TEST_HTTP) {
  const { createServer } = await import('node:http');
  const { randomUUID } = await import('node:crypto');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: process.env.MCP_TEST_HTTP === 'json' });
  await server.connect(transport);
  const listener = createServer((request, response) => transport.handleRequest(request, response));
  listener.listen(0, '127.0.0.1', () => process.stderr.write(`listening on ${listener.address().port}\n`));
} else {
  await server.connect(new StdioServerTransport());
}
