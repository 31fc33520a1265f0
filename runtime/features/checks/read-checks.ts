/**
 * Turns the `checks:` and `retry:` sections of a schema-validated recipe into definitions, and
 * finds what the schema cannot: patterns that do not compile, schemas that are not schemas, and
 * an answer check in a recipe without `response:`. Problems carry their YAML path, so the loader
 * can point at the line.
 */
import { checkJsonSchema } from '../../contract/json-schema.js';
import type { JsonSchema } from '../../contract/tool.js';
import { patternProblem } from './check-pattern.js';
import { checkDefaults, recipeDefaults } from '../../config/defaults.js';
import type { CheckDefinition, RetryPolicy } from '../../config/check-types.js';

export interface CheckProblem {
  /** Where in the recipe, for example ['checks', 2, 'matches']. */
  path: Array<string | number>;
  message: string;
}

const kindKeys = ['command', 'file', 'answer', 'answer_matches'] as const;
const longestDefaultName = 80;
export const maximumAttempts = 10;

export function readChecks(
  raw: unknown,
  options: { responseSchema?: JsonSchema } = {},
): { checks: CheckDefinition[]; problems: CheckProblem[] } {
  const problems: CheckProblem[] = [];
  if (raw === undefined || raw === null) return { checks: [], problems };
  if (!Array.isArray(raw)) return { checks: [], problems: [{ path: ['checks'], message: "'checks' must be a list" }] };
  const checks: CheckDefinition[] = [];
  raw.forEach((item: unknown, index) => {
    const check = readCheck(item, ['checks', index], options, problems);
    if (check) checks.push(check);
  });
  return { checks, problems };
}

export function readRetryPolicy(raw: unknown): { retry: RetryPolicy; problems: CheckProblem[] } {
  const single: RetryPolicy = { maxAttempts: recipeDefaults.retry.max_attempts };
  if (raw === undefined || raw === null) return { retry: single, problems: [] };
  if (!isRecord(raw)) return { retry: single, problems: [{ path: ['retry'], message: "'retry' must be a mapping" }] };
  const problems: CheckProblem[] = [];
  const attempts = raw.max_attempts;
  if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1 || attempts > maximumAttempts) {
    problems.push({ path: ['retry', 'max_attempts'], message: `'retry.max_attempts' must be a whole number from 1 to ${maximumAttempts}` });
  }
  const onFailure = raw.on_failure;
  if (onFailure !== undefined && (typeof onFailure !== 'string' || onFailure.trim() === '')) {
    problems.push({ path: ['retry', 'on_failure'], message: "'retry.on_failure' must be a shell command" });
  }
  if (problems.length > 0) return { retry: single, problems };
  return { retry: { maxAttempts: attempts as number, onFailure: onFailure as string | undefined }, problems };
}

function readCheck(
  item: unknown,
  path: Array<string | number>,
  options: { responseSchema?: JsonSchema },
  problems: CheckProblem[],
): CheckDefinition | undefined {
  const where = `'${path.join('.')}'`;
  if (!isRecord(item)) {
    problems.push({ path, message: `${where} must be a mapping` });
    return undefined;
  }
  const kinds = kindKeys.filter((key) => item[key] !== undefined);
  if (kinds.length !== 1) {
    const found = kinds.length === 0 ? 'none' : kinds.join(' and ');
    problems.push({ path, message: `${where} must have exactly one of ${kindKeys.join(', ')} (it has ${found})` });
    return undefined;
  }
  const explicitName = typeof item.name === 'string' && item.name.trim() !== '' ? item.name : undefined;
  const problemCount = problems.length;
  const definition = readKind(kinds[0], item, path, options, problems);
  if (!definition || problems.length > problemCount) return undefined;
  return { ...definition, name: explicitName ?? definition.name };
}

function readKind(
  kind: (typeof kindKeys)[number],
  item: Record<string, unknown>,
  path: Array<string | number>,
  options: { responseSchema?: JsonSchema },
  problems: CheckProblem[],
): CheckDefinition | undefined {
  const misplaced = (key: string, owner: string) => {
    if (item[key] !== undefined) problems.push({ path: [...path, key], message: `'${key}' belongs to ${owner} checks, not ${kind} checks` });
  };
  if (kind !== 'command') misplaced('timeout_seconds', 'command');
  if (kind !== 'file') {
    misplaced('schema', 'file');
    misplaced('matches', 'file');
  }
  switch (kind) {
    case 'command': {
      const command = requireText(item, 'command', path, problems);
      const timeout = item.timeout_seconds ?? checkDefaults.timeout_seconds;
      if (typeof timeout !== 'number' || !(timeout > 0)) {
        problems.push({ path: [...path, 'timeout_seconds'], message: "'timeout_seconds' must be a positive number" });
      }
      return command === undefined ? undefined : { kind, name: defaultName(command), command, timeoutSeconds: timeout as number };
    }
    case 'file': {
      const file = requireText(item, 'file', path, problems);
      const schema = item.schema;
      if (schema !== undefined) {
        const problem = isRecord(schema) ? checkJsonSchema(schema) : 'it must be a mapping';
        if (problem) problems.push({ path: [...path, 'schema'], message: `'schema' is not a valid JSON Schema: ${problem}` });
      }
      const matches = readPattern(item, 'matches', path, problems);
      if (file === undefined) return undefined;
      const qualities = [schema !== undefined ? 'matches its schema' : '', matches !== undefined ? `matches /${matches}/` : ''].filter(Boolean);
      const name = defaultName(qualities.length > 0 ? `${file} ${qualities.join(' and ')}` : `${file} exists`);
      return { kind, name, file, schema: schema as JsonSchema | undefined, matches };
    }
    case 'answer':
      if (item.answer !== 'matches_response') {
        problems.push({ path: [...path, 'answer'], message: "'answer' must be matches_response" });
        return undefined;
      }
      if (!options.responseSchema) {
        problems.push({ path: [...path, 'answer'], message: 'answer: matches_response needs the recipe to declare a response schema (`response:`)' });
        return undefined;
      }
      return { kind, name: 'the answer matches the response schema' };
    case 'answer_matches': {
      const pattern = readPattern(item, 'answer_matches', path, problems);
      return pattern === undefined ? undefined : { kind, name: defaultName(`the answer matches /${pattern}/`), pattern };
    }
  }
}

function requireText(item: Record<string, unknown>, key: string, path: Array<string | number>, problems: CheckProblem[]): string | undefined {
  const value = item[key];
  if (typeof value === 'string' && value.trim() !== '') return value;
  problems.push({ path: [...path, key], message: `'${key}' must be a non-empty string` });
  return undefined;
}

function readPattern(item: Record<string, unknown>, key: string, path: Array<string | number>, problems: CheckProblem[]): string | undefined {
  const value = item[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') {
    problems.push({ path: [...path, key], message: `'${key}' must be a non-empty regular expression` });
    return undefined;
  }
  const problem = patternProblem(value);
  if (problem) {
    problems.push({ path: [...path, key], message: `'${key}' is not a valid regular expression: ${problem}` });
    return undefined;
  }
  return value;
}

/** A name from the check's own text: its first line, shortened. */
function defaultName(text: string): string {
  const lines = text.trim().split('\n');
  // Counted in code points, so a shortened name never ends in half a character.
  const characters = [...lines[0]];
  if (characters.length > longestDefaultName) return `${characters.slice(0, longestDefaultName - 3).join('')}...`;
  return lines.length > 1 ? `${lines[0]} ...` : lines[0];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
