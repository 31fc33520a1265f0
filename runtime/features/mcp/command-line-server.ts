/**
 * `--mcp 'name=command args...'`: a stdio server the user adds for one run. The words are split
 * as a shell would split them (quotes and backslashes), but nothing is expanded.
 */
import { resolve } from 'node:path';
import { UsageError } from '../../contract/errors.js';
import { mcpServerDefaults } from '../../config/defaults.js';
import type { McpServerConfig } from './server-config.js';

export function parseCommandLineServer(text: string, cwd: string): McpServerConfig {
  const separator = text.indexOf('=');
  const name = separator > 0 ? text.slice(0, separator).trim() : '';
  const words = separator > 0 ? splitWords(text.slice(separator + 1)) : [];
  if (!/^[A-Za-z0-9_.-]+$/.test(name) || words.length === 0) {
    throw new UsageError(`--mcp expects name=command [args...], for example --mcp 'fs=npx mcp-server-filesystem .'; got '${text}'`);
  }
  return {
    name,
    transport: { kind: 'stdio', command: words[0], args: words.slice(1), env: {}, cwd: resolve(cwd) },
    tools: { deny: [] },
    required: true,
    startupTimeoutSeconds: mcpServerDefaults.startup_timeout_seconds,
    callTimeoutSeconds: mcpServerDefaults.call_timeout_seconds,
    maxResultBytes: mcpServerDefaults.max_result_mb * 1024 * 1024,
    declaredIn: resolve(cwd, '--mcp'),
    origin: 'command-line',
  };
}

function splitWords(text: string): string[] {
  const words: string[] = [];
  let current: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (quote) {
      if (character === quote) quote = undefined;
      else if (character === '\\' && quote === '"' && index + 1 < text.length) current += text[(index += 1)];
      else current += character;
    } else if (character === '"' || character === "'") {
      quote = character;
      current ??= '';
    } else if (character === '\\' && index + 1 < text.length) {
      current = (current ?? '') + text[(index += 1)];
    } else if (/\s/.test(character)) {
      if (current !== undefined) words.push(current);
      current = undefined;
    } else {
      current = (current ?? '') + character;
    }
  }
  if (quote) throw new UsageError(`--mcp: unclosed ${quote} in '${text}'`);
  if (current !== undefined) words.push(current);
  return words;
}
