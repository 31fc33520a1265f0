/**
 * Tool-call arguments from the model: parsed, repaired once when a model wrote almost-JSON (a
 * common failure of local models), and checked against the tool's JSON Schema.
 */
import { checkJsonSchema, compileJsonSchema } from './json-schema.js';
import type { AnyToolDefinition } from './tool.js';

export type ParsedArguments =
  | { ok: true; value: Record<string, unknown>; repaired: boolean }
  | { ok: false; error: string };

export function parseToolArguments(raw: string): ParsedArguments {
  const direct = tryParse(raw.trim() === '' ? '{}' : raw);
  if (direct.ok) return { ...direct, repaired: false };
  const repaired = tryParse(repairJson(raw));
  if (repaired.ok) return { ...repaired, repaired: true };
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

/** Fixes what models commonly get wrong: code fences, trailing commas, Python literals, unclosed brackets. */
export function repairJson(raw: string): string {
  let text = raw.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text);
  if (fenced) text = fenced[1];
  const start = text.search(/[{[]/);
  if (start > 0) text = text.slice(start);
  if (!text.includes('"') && text.includes("'")) text = text.replace(/'/g, '"');
  text = text
    .replace(/,\s*([}\]])/g, '$1')
    .replace(/:\s*True\b/g, ': true')
    .replace(/:\s*False\b/g, ': false')
    .replace(/:\s*None\b/g, ': null');
  return closeBrackets(text);
}

function closeBrackets(text: string): string {
  const open: string[] = [];
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (inString) {
      if (character === '\\') index += 1;
      else if (character === '"') inString = false;
      continue;
    }
    if (character === '"') inString = true;
    else if (character === '{') open.push('}');
    else if (character === '[') open.push(']');
    else if ((character === '}' || character === ']') && open.at(-1) === character) open.pop();
  }
  return (inString ? `${text}"` : text) + open.reverse().join('');
}

/** Checks a tool's schema now, so a broken schema is reported at load time rather than at first call. */
export function checkToolSchema(tool: AnyToolDefinition): string | undefined {
  const problem = checkJsonSchema(tool.parameters);
  return problem ? `tool '${tool.name}' has an invalid parameters schema: ${problem}` : undefined;
}

/** Validates (and fills defaults into) `value`; returns readable problems, or none. */
export function validateToolArguments(tool: AnyToolDefinition, value: Record<string, unknown>): string[] {
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
