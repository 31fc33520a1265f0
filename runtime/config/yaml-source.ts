/**
 * YAML parsing that keeps node positions, so every later error can name file:line:column.
 */
import { readFileSync } from 'node:fs';
import { isMap, isPair, isScalar, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { Diagnostic, SourceLocation } from '../contract/errors.js';

export type YamlPath = ReadonlyArray<string | number>;

export interface YamlSource {
  file: string;
  text: string;
  document: Document.Parsed;
  lineCounter: LineCounter;
  data: unknown;
}

export function readYamlFile(file: string): { source?: YamlSource; diagnostics: Diagnostic[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message;
    return { diagnostics: [{ severity: 'error', message: `cannot read YAML: ${reason}`, location: { file } }] };
  }
  return parseYamlText(file, text);
}

/**
 * The last parse of each file, by its text: a batch resolves its recipe and agents files once per
 * item, and parsing is most of that. Each caller still gets data of its own.
 */
const parsedFiles = new Map<string, { text: string; document: Document.Parsed; lineCounter: LineCounter }>();

export function parseYamlText(file: string, text: string): { source?: YamlSource; diagnostics: Diagnostic[] } {
  const parsed = parsedFiles.get(file);
  if (parsed?.text === text) {
    return { source: { file, text, document: parsed.document, lineCounter: parsed.lineCounter, data: parsed.document.toJS({ maxAliasCount: 1000 }) }, diagnostics: [] };
  }
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const diagnostics: Diagnostic[] = document.errors.map((error) => {
    // Without prettyErrors the parser leaves linePos unset; the offset is always there.
    const position = lineCounter.linePos(error.pos[0]);
    return {
      severity: 'error' as const,
      message: `YAML syntax: ${firstLine(error.message)}`,
      location: { file, line: position.line, column: position.col },
    };
  });
  if (diagnostics.length > 0) return { diagnostics };
  parsedFiles.set(file, { text, document, lineCounter });
  return { source: { file, text, document, lineCounter, data: document.toJS({ maxAliasCount: 1000 }) }, diagnostics };
}

function firstLine(message: string): string {
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}

function locationOfOffset(source: YamlSource, offset: number | undefined): SourceLocation {
  if (offset === undefined) return { file: source.file };
  const position = source.lineCounter.linePos(offset);
  return { file: source.file, line: position.line, column: position.col };
}

function nodeAt(source: YamlSource, path: YamlPath): Node | undefined {
  if (path.length === 0) return source.document.contents ?? undefined;
  const found = source.document.getIn(path as Array<string | number>, true);
  return found && typeof found === 'object' && 'range' in (found as object) ? (found as Node) : undefined;
}

/** The location of the value at `path`, falling back to the nearest ancestor that exists. */
export function locate(source: YamlSource, path: YamlPath): SourceLocation {
  for (let length = path.length; length >= 0; length -= 1) {
    const node = nodeAt(source, path.slice(0, length));
    if (node?.range) return locationOfOffset(source, node.range[0]);
  }
  return { file: source.file, line: 1, column: 1 };
}

/** The location of the key `key` inside the mapping at `path` (for "unknown key" errors). */
export function locateKey(source: YamlSource, path: YamlPath, key: string): SourceLocation {
  const mapping = nodeAt(source, path);
  if (isMap(mapping)) {
    for (const pair of mapping.items) {
      if (isPair(pair) && isScalar(pair.key) && String(pair.key.value) === key && pair.key.range) {
        return locationOfOffset(source, pair.key.range[0]);
      }
    }
  }
  return locate(source, path);
}

/** Splits an ajv instancePath (a JSON pointer) into YAML path segments. */
export function pathFromPointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}
