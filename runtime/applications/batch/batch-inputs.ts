/**
 * A batch's inputs: one item per JSON Lines object or CSV row, each key or column a recipe
 * parameter. Values arrive as the text `--param` would give, so the recipe converts and checks
 * them the same way. A bad line is an error naming the file and line.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { UsageError } from '../../contract/errors.js';

export interface BatchInput {
  /** 0-based position among the items. */
  index: number;
  /** 1-based line of the file the item starts on. */
  line: number;
  parameters: Record<string, string>;
}

export interface BatchInputs {
  file: string;
  items: BatchInput[];
  /** The file's content hash, so a resumed batch knows its inputs did not change. */
  hash: string;
}

export function readBatchInputs(file: string, displayName = file): BatchInputs {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the inputs file ${displayName}: ${(error as Error).message}`);
  }
  const kind = extname(file).toLowerCase();
  const items = kind === '.csv' ? csvItems(text, displayName) : kind === '.jsonl' || kind === '.ndjson' ? jsonLinesItems(text, displayName) : undefined;
  if (!items) throw new UsageError(`the inputs file ${displayName} must end in .jsonl or .csv`);
  if (items.length === 0) throw new UsageError(`the inputs file ${displayName} holds no items`);
  return { file, items, hash: contentHash(text) };
}

export function contentHash(text: string | Buffer): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

function jsonLinesItems(text: string, file: string): BatchInput[] {
  const items: BatchInput[] = [];
  text.split('\n').forEach((raw, lineIndex) => {
    const line = raw.trim();
    if (line === '') return;
    const where = `${file}:${lineIndex + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new UsageError(`${where}: not valid JSON (${(error as Error).message})`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${where}: each line must be a JSON object of recipe parameters`);
    const parameters: Record<string, string> = {};
    for (const [key, entry] of Object.entries(value)) parameters[key] = parameterText(entry, `${where}: ${key}`);
    items.push({ index: items.length, line: lineIndex + 1, parameters });
  });
  return items;
}

/** A value as `--param` text: lists as a JSON array, which list parameters read. */
function parameterText(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) return JSON.stringify(value);
  throw new UsageError(`${where}: a parameter value must be a string, number, boolean or a list of strings`);
}

/** RFC 4180: a header row, quoted fields with doubled quotes and line breaks inside, CRLF or LF. */
function csvItems(text: string, file: string): BatchInput[] {
  const rows = csvRows(text.replace(/^\uFEFF/, ''), file);
  const header = rows.shift();
  if (!header) return [];
  const names = header.fields.map((name) => name.trim());
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate !== undefined) throw new UsageError(`${file}:1: the column '${duplicate}' appears twice`);
  const empty = names.findIndex((name) => name === '');
  if (empty >= 0) throw new UsageError(`${file}:1: column ${empty + 1} has no name`);
  return rows
    .filter((row) => !(row.fields.length === 1 && row.fields[0] === ''))
    .map((row, index) => {
      if (row.fields.length !== names.length) throw new UsageError(`${file}:${row.line}: ${row.fields.length} fields, but the header names ${names.length} columns`);
      return { index, line: row.line, parameters: Object.fromEntries(names.map((name, column) => [name, row.fields[column]])) };
    });
}

function csvRows(text: string, file: string): Array<{ line: number; fields: string[] }> {
  const rows: Array<{ line: number; fields: string[] }> = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  let position = 0;
  const endRow = () => {
    fields.push(field);
    rows.push({ line: rowLine, fields });
    fields = [];
    field = '';
  };
  while (position < text.length) {
    const character = text[position];
    if (quoted) {
      if (character === '"' && text[position + 1] === '"') {
        field += '"';
        position += 2;
        continue;
      }
      if (character === '"') quoted = false;
      else {
        if (character === '\n') line += 1;
        field += character;
      }
      position += 1;
      continue;
    }
    if (character === '"' && field === '') quoted = true;
    else if (character === ',') {
      fields.push(field);
      field = '';
    } else if (character === '\n' || (character === '\r' && text[position + 1] === '\n')) {
      if (character === '\r') position += 1;
      endRow();
      line += 1;
      rowLine = line;
    } else field += character;
    position += 1;
  }
  if (quoted) throw new UsageError(`${file}:${rowLine}: a quoted field is not closed`);
  if (field !== '' || fields.length > 0) endRow();
  return rows;
}
