/**
 * Reads OpenManus's configuration files: config/config.toml and config/mcp.json. A parse error
 * names file:line:column and what is wrong, never the line itself: the line may hold an API key.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, type SourceLocation } from '../../contract/errors.js';

export type TomlTable = Record<string, unknown>;

export interface OpenManusSource {
  file: string;
  data: TomlTable;
  /** Where `[section] key` is written, for messages that point at it. */
  locate(section: readonly string[], key?: string): SourceLocation;
}

export async function readOpenManusConfig(file: string): Promise<OpenManusSource> {
  const text = readText(file);
  // The TOML parser is loaded for this command alone: nothing else reads TOML.
  const { parse, TomlError } = await import('smol-toml');
  try {
    return { file, data: parse(text) as TomlTable, locate: tomlLocator(file, text) };
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    // smol-toml's message quotes the line with a caret; only its first line, the reason, is kept.
    const reason = error.message.split('\n')[0]!.replace(/^Invalid TOML document:\s*/, '');
    throw new ConfigError([{ severity: 'error', message: `not valid TOML: ${reason}`, location: { file, line: error.line, column: error.column } }]);
  }
}

export interface McpJsonSource {
  file: string;
  servers: Record<string, unknown>;
  locate(serverId: string): SourceLocation;
}

export function readOpenManusMcpJson(file: string): McpJsonSource {
  const text = readText(file);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([{ severity: 'error', message: `not valid JSON: ${jsonReason(error)}`, location: { file, ...jsonPosition(text, error) } }]);
  }
  const servers = (data as { mcpServers?: unknown } | null)?.mcpServers;
  if (!isTable(servers)) {
    throw new ConfigError([{ severity: 'error', message: 'expected an object with "mcpServers": {id: {type, url | command, args}}', location: { file, line: 1, column: 1 } }]);
  }
  return {
    file,
    servers,
    locate: (serverId) => ({ file, ...positionOf(text, text.indexOf(JSON.stringify(serverId))) }),
  };
}

export function isTable(value: unknown): value is TomlTable {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'a folder, not a file' : (error as Error).message;
    throw new ConfigError([{ severity: 'error', message: `cannot read: ${reason}`, location: { file } }]);
  }
}

/** Node's message without the excerpt of the text that newer versions quote after the position. */
function jsonReason(error: unknown): string {
  return String((error as Error).message).replace(/ in JSON at position \d+.*$/s, '').replace(/, "[\s\S]*$/, '');
}

function jsonPosition(text: string, error: unknown): { line?: number; column?: number } {
  const message = String((error as Error).message);
  const lineColumn = /\(line (\d+) column (\d+)\)/.exec(message);
  if (lineColumn) return { line: Number(lineColumn[1]), column: Number(lineColumn[2]) };
  const offset = /position (\d+)/.exec(message);
  if (offset) return positionOf(text, Number(offset[1]));
  return /Unexpected end of JSON input/.test(message) ? positionOf(text, text.length) : {};
}

function positionOf(text: string, offset: number): { line?: number; column?: number } {
  if (offset < 0) return {};
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/**
 * Finds the line of a table header or of a key inside one. The parsed data carries no positions;
 * a scan of `[header]` and `key =` lines is enough to point the user at a setting.
 */
function tomlLocator(file: string, text: string): OpenManusSource['locate'] {
  const keyLines = new Map<string, number>();
  let section = '';
  text.split('\n').forEach((line, index) => {
    const header = /^\s*\[\s*([^\]]+?)\s*\]/.exec(line);
    if (header) {
      section = header[1]!.split('.').map((part) => part.trim().replace(/^["']|["']$/g, '')).join('.');
      if (!keyLines.has(section)) keyLines.set(section, index + 1);
      return;
    }
    const key = /^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=/.exec(line);
    if (key) {
      const name = `${section}\u0000${key[1]!.replace(/^["']|["']$/g, '')}`;
      if (!keyLines.has(name)) keyLines.set(name, index + 1);
    }
  });
  return (path, key) => {
    const section = path.join('.');
    const line = (key === undefined ? undefined : keyLines.get(`${section}\u0000${key}`)) ?? keyLines.get(section);
    return line === undefined ? { file } : { file, line };
  };
}
