/**
 * Tool-call arguments from the model: parsed, rewritten once when a model wrote almost-JSON (a
 * common failure of local models), and checked against the tool's JSON Schema. A rewrite never
 * changes a value and never closes or completes anything: arguments cut off mid-way stay invalid,
 * so a partial call cannot run with a guessed ending.
 */
import { checkJsonSchema, compileJsonSchema } from '../contract/json-schema.js';
import type { AnyToolDefinition } from '../contract/tool.js';

export type ParsedArguments =
  | { ok: true; value: Record<string, unknown>; repaired: boolean }
  | { ok: false; error: string };

export function parseToolArguments(raw: string): ParsedArguments {
  const direct = tryParse(raw.trim() === '' ? '{}' : raw);
  if (direct.ok) return { ...direct, repaired: false };
  const repairedText = repairJson(raw);
  const repaired = repairedText === undefined ? undefined : tryParse(repairedText);
  if (repaired?.ok) return { ...repaired, repaired: true };
  return { ok: false, error: direct.error };
}

function tryParse(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { ok: false, error: 'arguments must be a JSON object' };
    }
    return { ok: true, value: value as Record<string, unknown> };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/**
 * Rewrites what models commonly get wrong into JSON, leaving every value as the model sent it: a
 * markdown fence or leading prose around the object, trailing commas, Python's True/False/None and
 * single-quoted strings. Rewrites apply only outside strings, so a value containing `'`, `True` or
 * `, }` is never touched. Undefined when a string is unterminated: nothing is ever closed.
 */
export function repairJson(raw: string): string | undefined {
  let text = raw.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text);
  if (fenced) text = fenced[1];
  const start = text.search(/[{[]/);
  if (start > 0) text = text.slice(start);
  return rewriteOutsideStrings(text);
}

const pythonLiterals: Record<string, string> = { True: 'true', False: 'false', None: 'null' };
const trailingComma = /,(?=\s*[}\]])/y;
const bareWord = /[A-Za-z_]\w*/y;

function rewriteOutsideStrings(text: string): string | undefined {
  let output = '';
  let index = 0;
  while (index < text.length) {
    const character = text[index];
    if (character === '"' || character === "'") {
      const string = character === '"' ? readJsonString(text, index) : readSingleQuotedString(text, index);
      if (!string) return undefined;
      output += string.json;
      index = string.end;
      continue;
    }
    trailingComma.lastIndex = index;
    if (trailingComma.test(text)) {
      index += 1;
      continue;
    }
    bareWord.lastIndex = index;
    const word = bareWord.exec(text)?.[0];
    if (word) {
      output += pythonLiterals[word] ?? word;
      index += word.length;
      continue;
    }
    output += character;
    index += 1;
  }
  return output;
}

/** A double-quoted string, copied as it is; its end is found by JSON's own escaping rules. */
function readJsonString(text: string, start: number): { json: string; end: number } | undefined {
  for (let index = start + 1; index < text.length; index += 1) {
    if (text[index] === '\\') index += 1;
    else if (text[index] === '"') return { json: text.slice(start, index + 1), end: index + 1 };
  }
  return undefined;
}

// Escapes that mean the same in a Python string literal and in JSON; any other escape is refused
// rather than guessed.
const sharedEscapes = new Set(['\\', '"', 'n', 'r', 't', 'b', 'f', 'u']);

/** A Python-style single-quoted string, re-quoted for JSON with the same value. */
function readSingleQuotedString(text: string, start: number): { json: string; end: number } | undefined {
  let json = '"';
  for (let index = start + 1; index < text.length; index += 1) {
    const character = text[index];
    if (character === "'") return { json: `${json}"`, end: index + 1 };
    if (character === '"') {
      json += '\\"';
    } else if (character === '\\') {
      const next = text[index + 1];
      if (next === "'") json += "'";
      else if (next !== undefined && sharedEscapes.has(next)) json += character + next;
      else return undefined;
      index += 1;
    } else {
      json += character;
    }
  }
  return undefined;
}

/** Checks a tool's schema now, so a broken schema is reported at load time rather than at first call. */
export function checkToolSchema(tool: AnyToolDefinition): string | undefined {
  const problem = checkJsonSchema(tool.parameters);
  return problem ? `tool '${tool.name}' has an invalid parameters schema: ${problem}` : undefined;
}

/** Validates (and fills defaults into) `value`; returns readable problems, or none. */
export function validateToolArguments(tool: Pick<AnyToolDefinition, 'parameters'>, value: Record<string, unknown>): string[] {
  const validate = compileJsonSchema(tool.parameters);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => {
    const where = error.instancePath ? `'${error.instancePath.slice(1).replace(/\//g, '.')}'` : 'the arguments';
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required') return `missing required argument '${String(params.missingProperty)}'`;
    if (error.keyword === 'additionalProperties') return `unknown argument '${String(params.additionalProperty)}'`;
    if (error.keyword === 'enum') return `${where} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    return `${where} ${error.message ?? 'is invalid'}`;
  });
}
