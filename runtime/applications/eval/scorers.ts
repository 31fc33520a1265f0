/**
 * The built-in scorers: each turns one finished run into a score in [0, 1] with a reason. They are
 * plain functions of what the run left (answer, structured answer, checks, tool calls, steps, cost,
 * workspace files) and the row's expectations, so scoring a recorded run again needs no model.
 * Judges and plugin scorers are asynchronous; the rest answer at once.
 */
import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import type { CheckResult } from '../../config/check-types.js';
import type { Score, ScorerInput } from '../../contract/scorer.js';
import type { EvalScorer } from './eval-file.js';

export interface ScoredRun extends Omit<ScorerInput, 'options'> {
  checks: readonly CheckResult[];
}

export interface ScorerResult {
  name: string;
  type: string;
  score: number;
  passed: boolean;
  reason: string;
}

/** A judge's score for a run, given by the caller (it needs a model). */
export type JudgeScorer = (scorer: EvalScorer, run: ScoredRun) => Promise<Score>;

export async function scoreRun(scorers: readonly EvalScorer[], run: ScoredRun, judge?: JudgeScorer): Promise<ScorerResult[]> {
  const results: ScorerResult[] = [];
  for (const scorer of scorers) {
    let score: Score;
    try {
      score = scorer.type === 'judge' ? judge ? await judge(scorer, run) : { score: 0, reason: 'no judge model is available' }
        : scorer.type === 'plugin' ? await scorer.plugin!.score({ ...run, options: scorer.settings.options ?? {} })
        : builtInScore(scorer, run);
    } catch (error) {
      score = { score: 0, reason: `the scorer failed: ${(error as Error).message}` };
    }
    const value = Number.isFinite(score.score) ? Math.min(1, Math.max(0, score.score)) : 0;
    const reason = score.reason ?? '';
    results.push({
      name: scorer.name,
      type: scorer.type,
      score: value,
      passed: value >= scorer.threshold,
      reason: value === score.score ? reason : `${reason}${reason ? '; ' : ''}the score ${String(score.score)} was outside [0, 1]`,
    });
  }
  return results;
}

/** The weighted mean of the scorers' scores, and whether every scorer passed. */
export function itemScore(scorers: readonly EvalScorer[], results: readonly ScorerResult[]): { score: number; passed: boolean } {
  let total = 0;
  let weights = 0;
  results.forEach((result, index) => {
    const weight = scorers[index]?.weight ?? 1;
    total += weight * result.score;
    weights += weight;
  });
  return { score: weights === 0 ? 0 : total / weights, passed: results.every((result) => result.passed) };
}

function builtInScore(scorer: EvalScorer, run: ScoredRun): Score {
  const settings = scorer.settings;
  switch (settings.type) {
    case 'checks': {
      const ran = run.checks.filter((check) => !check.skipped);
      if (run.checks.length === 0) return binary(run.status === 'success', run.status === 'success' ? 'the run succeeded; the recipe has no checks' : `the run ended ${run.status}`);
      const passed = ran.filter((check) => check.passed).length;
      const failed = run.checks.filter((check) => !check.passed).map((check) => check.name);
      return { score: passed / run.checks.length, reason: failed.length === 0 ? `${passed} check(s) passed` : `failed: ${failed.join(', ')}` };
    }
    case 'equals': {
      const expected = textOf(expand(settings.value, run));
      const actual = run.answer.trim();
      const same = settings.case_sensitive ? actual === expected.trim() : actual.toLowerCase() === expected.trim().toLowerCase();
      return binary(same, same ? 'the answer equals the expected value' : `expected ${quoted(expected)}, got ${quoted(actual)}`);
    }
    case 'includes': {
      const wanted = expand(settings.value, run);
      const parts = (Array.isArray(wanted) ? wanted : [wanted]).map(textOf);
      const haystack = settings.case_sensitive ? run.answer : run.answer.toLowerCase();
      const missing = parts.filter((part) => !haystack.includes(settings.case_sensitive ? part : part.toLowerCase()));
      return { score: parts.length === 0 ? 1 : (parts.length - missing.length) / parts.length, reason: missing.length === 0 ? 'the answer includes every expected text' : `the answer lacks ${missing.map(quoted).join(', ')}` };
    }
    case 'regex': {
      const subject = settings.path ? textOf(fieldAt(run.structured, settings.path)) : run.answer;
      const matched = scorer.pattern!.test(subject);
      return binary(matched, matched ? `matches /${settings.pattern}/` : `does not match /${settings.pattern}/`);
    }
    case 'number': {
      const expected = Number(textOf(expand(settings.value, run)));
      const source = settings.path ? textOf(fieldAt(run.structured, settings.path)) : run.answer;
      const actual = firstNumber(source);
      if (actual === undefined) return { score: 0, reason: `no number in ${quoted(source)}` };
      if (!Number.isFinite(expected)) return { score: 0, reason: 'the expected value is not a number' };
      const tolerance = (settings.tolerance ?? 0) * (settings.relative ? Math.abs(expected) : 1);
      const within = Math.abs(actual - expected) <= tolerance;
      return binary(within, `${actual} ${within ? 'is' : 'is not'} within ${tolerance} of ${expected}`);
    }
    case 'json_schema': {
      const value = run.structured ?? parsedJson(run.answer);
      if (value === undefined) return { score: 0, reason: 'the answer is not JSON' };
      const validate = schemaValidator(settings.schema!);
      const valid = validate(value);
      return binary(valid, valid ? 'the answer matches the schema' : `the answer does not match the schema: ${(validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`).join('; ')}`);
    }
    case 'field': {
      const actual = fieldAt(run.structured ?? parsedJson(run.answer), settings.path!);
      if (actual === undefined) return { score: 0, reason: `the answer has no field ${settings.path}` };
      if (settings.value === undefined) return { score: 1, reason: `the answer has the field ${settings.path}` };
      const expected = expand(settings.value, run);
      const same = typeof actual === 'string' && typeof expected === 'string' && !settings.case_sensitive
        ? actual.trim().toLowerCase() === expected.trim().toLowerCase()
        : JSON.stringify(actual) === JSON.stringify(expected);
      return binary(same, same ? `${settings.path} is ${quoted(textOf(actual))}` : `${settings.path}: expected ${quoted(textOf(expected))}, got ${quoted(textOf(actual))}`);
    }
    case 'files': {
      const text = run.readFile(settings.path!);
      if (text === undefined) return { score: 0, reason: `the workspace has no file ${settings.path}` };
      if (!scorer.pattern) return { score: 1, reason: `${settings.path} exists` };
      const matched = scorer.pattern.test(text);
      return binary(matched, `${settings.path} ${matched ? 'matches' : 'does not match'} /${settings.matches}/`);
    }
    case 'tool_called': {
      const count = run.toolCalls.filter((call) => call.name === settings.tool).length;
      return binary(count > 0, count > 0 ? `${settings.tool} was called ${count} time(s)` : `${settings.tool} was never called`);
    }
    case 'tool_not_called': {
      const count = run.toolCalls.filter((call) => call.name === settings.tool).length;
      return binary(count === 0, count === 0 ? `${settings.tool} was not called` : `${settings.tool} was called ${count} time(s)`);
    }
    case 'max_steps':
      return binary(run.steps <= settings.limit!, `${run.steps} step(s), at most ${settings.limit} allowed`);
    case 'max_cost':
      if (run.cost === undefined) return { score: 0, reason: 'the run\'s cost is unknown (the model has no price)' };
      return binary(run.cost <= settings.limit!, `$${run.cost.toFixed(6)}, at most $${settings.limit} allowed`);
    default:
      return { score: 0, reason: `no built-in scorer ${settings.type}` };
  }
}

function binary(passed: boolean, reason: string): Score {
  return { score: passed ? 1 : 0, reason };
}

/**
 * A value with `{{expected}}`, `{{expected.<path>}}` and `{{<parameter>}}` filled in: a string that
 * is one placeholder takes the value itself (a number stays a number); placeholders inside text
 * become text.
 */
export function expand(value: unknown, run: Pick<ScoredRun, 'expected' | 'parameters'>): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{\s*([\w.-]+)\s*\}\}$/.exec(value);
    if (whole) return lookup(whole[1], run);
    return value.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_match, name: string) => textOf(lookup(name, run)));
  }
  if (Array.isArray(value)) return value.map((entry) => expand(entry, run));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, expand(entry, run)]));
  return value;
}

function lookup(name: string, run: Pick<ScoredRun, 'expected' | 'parameters'>): unknown {
  if (name === 'expected') return run.expected;
  if (name.startsWith('expected.')) return fieldAt(run.expected, name.slice('expected.'.length));
  return run.parameters[name];
}

/** A dotted path into a value: `items.0.name`. */
export function fieldAt(value: unknown, path: string): unknown {
  let current = value;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

function quoted(text: string): string {
  const short = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  return `"${short}"`;
}

function firstNumber(text: string): number | undefined {
  const match = /-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?/i.exec(text);
  return match ? Number(match[0].replace(/,/g, '')) : undefined;
}

function parsedJson(text: string): unknown {
  const trimmed = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

let ajv: Ajv | undefined;
const validators = new WeakMap<object, ValidateFunction>();

/** Compiled once per schema; ajv is loaded only by an eval that checks a schema. */
function schemaValidator(schema: object): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    if (!ajv) {
      const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as { Ajv: typeof Ajv };
      ajv = new AjvClass({ allErrors: true, strict: false });
    }
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}
