/**
 * The built-in scorers and the statistics, in process: each scorer's score and reason for a run
 * that meets it and one that does not, and each interval against published reference values.
 */
import { describe, expect, it } from 'vitest';
import type { EvalScorer } from '../runtime/applications/eval/eval-file.js';
import type { ScorerYaml } from '../runtime/config/schema-types.generated.js';
import { expand, itemScore, scoreRun, type ScoredRun } from '../runtime/applications/eval/scorers.js';
import { bootstrapMeanInterval, mcnemarExact, pairedComparison, wilsonInterval } from '../runtime/applications/eval/statistics.js';
import { parseMinimumScores, evaluateGates } from '../runtime/applications/eval/eval-gates.js';
import { parseVerdict } from '../runtime/applications/eval/judge.js';
import { readRunFacts, workspaceFileReader } from '../runtime/applications/eval/run-facts.js';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function scorer(settings: ScorerYaml): EvalScorer {
  const pattern = settings.type === 'regex' ? settings.pattern : settings.type === 'files' ? settings.matches : undefined;
  return { type: settings.type, name: settings.name ?? settings.type, threshold: settings.threshold ?? 1, weight: settings.weight ?? 1, settings, location: { file: 'x.eval.yaml' }, ...(pattern ? { pattern: new RegExp(pattern, 'm') } : {}) };
}

function run(overrides: Partial<ScoredRun> = {}): ScoredRun {
  return {
    answer: 'The capital is Paris, population 2,102,650.',
    structured: { country: 'France', capital: 'Paris', population: 2102650, cities: [{ name: 'Lyon' }] },
    status: 'success',
    parameters: { country: 'France' },
    expected: { capital: 'Paris', population: 2100000 },
    toolCalls: [{ name: 'web_search', arguments: { query: 'France' }, isError: false }],
    steps: 3,
    cost: 0.002,
    totalTokens: 900,
    readFile: (path) => (path === 'report.md' ? '# France\nCapital: Paris\n' : undefined),
    checks: [],
    ...overrides,
  };
}

const runOf = run;

async function one(settings: ScorerYaml, scored = run()) {
  const [result] = await scoreRun([scorer(settings)], scored);
  return result;
}

describe('built-in scorers', () => {
  it('equals and includes compare without letter case unless asked, with templates from the row', async () => {
    expect(await one({ type: 'equals', value: '{{expected.capital}}' }, run({ answer: ' paris ' }))).toMatchObject({ score: 1, passed: true });
    expect(await one({ type: 'equals', value: '{{expected.capital}}', case_sensitive: true }, run({ answer: 'paris' }))).toMatchObject({ score: 0, reason: 'expected "Paris", got "paris"' });
    expect(await one({ type: 'includes', value: ['{{expected.capital}}', 'Berlin'] })).toMatchObject({ score: 0.5, passed: false, reason: 'the answer lacks "Berlin"' });
    expect(expand('{{expected.population}}', run())).toBe(2100000);
    expect(expand('in {{country}}: {{expected.capital}}', run())).toBe('in France: Paris');
  });

  it('regex, number with a tolerance, json_schema and field', async () => {
    expect(await one({ type: 'regex', pattern: 'capital is [A-Z]\\w+' })).toMatchObject({ score: 1 });
    expect(await one({ type: 'regex', pattern: '^Lyon$', path: 'cities.0.name' })).toMatchObject({ score: 1 });
    expect(await one({ type: 'number', value: '{{expected.population}}', tolerance: 0.001, relative: true })).toMatchObject({ score: 0, reason: '2102650 is not within 2100 of 2100000' });
    expect(await one({ type: 'number', value: '{{expected.population}}', tolerance: 0.05, relative: true })).toMatchObject({ score: 1 });
    expect(await one({ type: 'number', value: 2102650, path: 'population' })).toMatchObject({ score: 1 });
    const schema = { type: 'object', required: ['capital'], properties: { capital: { type: 'string' } } };
    expect(await one({ type: 'json_schema', schema })).toMatchObject({ score: 1 });
    expect(await one({ type: 'json_schema', schema }, run({ structured: { capital: 3 } }))).toMatchObject({ score: 0, reason: expect.stringContaining('/capital must be string') });
    expect(await one({ type: 'json_schema', schema }, run({ structured: undefined, answer: '```json\n{"capital": "Paris"}\n```' }))).toMatchObject({ score: 1 });
    expect(await one({ type: 'field', path: 'capital', value: '{{expected.capital}}' })).toMatchObject({ score: 1 });
    expect(await one({ type: 'field', path: 'cities.0.name', value: 'Marseille' })).toMatchObject({ score: 0, reason: 'cities.0.name: expected "Marseille", got "Lyon"' });
    expect(await one({ type: 'field', path: 'missing' })).toMatchObject({ score: 0, reason: 'the answer has no field missing' });
  });

  it('files, tool_called, tool_not_called, max_steps, max_cost and the recipe\'s checks', async () => {
    expect(await one({ type: 'files', path: 'report.md', matches: '^Capital: Paris$' })).toMatchObject({ score: 1 });
    expect(await one({ type: 'files', path: 'other.md' })).toMatchObject({ score: 0, reason: 'the workspace has no file other.md' });
    expect(await one({ type: 'tool_called', tool: 'web_search' })).toMatchObject({ score: 1 });
    expect(await one({ type: 'tool_not_called', tool: 'web_search' })).toMatchObject({ score: 0, reason: 'web_search was called 1 time(s)' });
    expect(await one({ type: 'max_steps', limit: 2 })).toMatchObject({ score: 0, reason: '3 step(s), at most 2 allowed' });
    expect(await one({ type: 'max_cost', limit: 0.01 })).toMatchObject({ score: 1 });
    expect(await one({ type: 'max_cost', limit: 0.01 }, run({ cost: undefined }))).toMatchObject({ score: 0, reason: expect.stringContaining('unknown') });
    const checks = [
      { name: 'report exists', kind: 'file' as const, passed: true, detail: '', durationMs: 1 },
      { name: 'tests pass', kind: 'command' as const, passed: false, detail: 'exit 1', durationMs: 1 },
    ];
    expect(await one({ type: 'checks' }, run({ checks, status: 'checks-failed' }))).toMatchObject({ score: 0.5, passed: false, reason: 'failed: tests pass' });
    expect(await one({ type: 'checks', threshold: 0.5 }, run({ checks, status: 'checks-failed' }))).toMatchObject({ score: 0.5, passed: true });
    expect(await one({ type: 'checks' }, run({ status: 'stuck' }))).toMatchObject({ score: 0, reason: 'the run ended stuck' });
  });

  it('an item\'s score is the weighted mean; it passes only when every scorer passes; a score outside [0, 1] is clamped', async () => {
    const scorers = [scorer({ type: 'equals', value: 'nope', weight: 3 }), scorer({ type: 'tool_called', tool: 'web_search' })];
    const results = await scoreRun(scorers, run());
    expect(itemScore(scorers, results)).toEqual({ score: 0.25, passed: false });
    const plugin = { ...scorer({ type: 'plugin', file: 'x.ts' }), plugin: { name: 'wild', score: () => ({ score: 7, reason: 'too high' }) } };
    const [clamped] = await scoreRun([plugin], run());
    expect(clamped).toMatchObject({ score: 1, reason: 'too high; the score 7 was outside [0, 1]' });
    const failing = { ...scorer({ type: 'plugin', file: 'x.ts' }), plugin: { name: 'broken', score: () => { throw new Error('boom'); } } };
    expect((await scoreRun([failing], run()))[0]).toMatchObject({ score: 0, reason: 'the scorer failed: boom' });
  });

  it('reads a judge\'s verdict, or scores 0 saying why', () => {
    expect(parseVerdict('{"score": 0.8, "reason": "mostly right"}')).toEqual({ score: 0.8, reason: 'mostly right' });
    expect(parseVerdict('Sure! {"score": 1, "reason": "ok"}')).toEqual({ score: 1, reason: 'ok' });
    expect(parseVerdict('eight out of ten')).toMatchObject({ score: 0, reason: expect.stringContaining('not JSON') });
  });
});

describe('what scorers read of a run', () => {
  it('reads tool calls and steps from events, and workspace files only inside the workspace, never through a link', async () => {
    const root = mkdtempSync(join(tmpdir(), 'manus-eval-facts-'));
    const run = join(root, 'runs', 'r1');
    mkdirSync(run, { recursive: true });
    mkdirSync(join(root, 'workspace', 'r1'), { recursive: true });
    writeFileSync(join(root, 'secret.txt'), 'the private key');
    writeFileSync(join(root, 'workspace', 'r1', 'report.md'), 'Capital: Paris');
    symlinkSync(join(root, 'secret.txt'), join(root, 'workspace', 'r1', 'leak.md'));
    writeFileSync(join(run, 'events.jsonl'), [
      { type: 'run-start', workspace: 'workspace/r1' },
      { type: 'tool-call-start', step: 1, callId: 'a', tool: 'bash', arguments: { command: 'ls' } },
      { type: 'tool-call-end', step: 1, callId: 'a', isError: true },
      { type: 'step-end', step: 1 },
      { type: 'step-end', step: 2 },
    ].map((event) => JSON.stringify(event)).join('\n') + '\n{"type": "cut off');
    const facts = readRunFacts(run, root);
    expect(facts).toMatchObject({ steps: 2, toolCalls: [{ name: 'bash', arguments: { command: 'ls' }, isError: true }] });
    const read = workspaceFileReader(facts.workspace);
    expect(read('report.md')).toBe('Capital: Paris');
    expect(read('leak.md')).toBeUndefined();
    expect(read('../../secret.txt')).toBeUndefined();
    const [result] = await scoreRun([scorer({ type: 'files', path: 'leak.md', matches: 'key' })], { ...runOf(), readFile: read });
    expect(result).toMatchObject({ score: 0, reason: 'the workspace has no file leak.md' });
  });
});

describe('eval statistics', () => {
  it('Wilson intervals match published values (Newcombe 1998, table I)', () => {
    // 81 of 263: 0.2553 to 0.3662; 15 of 148: 0.0624 to 0.1605; 0 of 10: 0 to 0.2775.
    const check = (passed: number, total: number, low: number, high: number) => {
      const interval = wilsonInterval(passed, total);
      expect(interval.low).toBeCloseTo(low, 4);
      expect(interval.high).toBeCloseTo(high, 4);
    };
    check(81, 263, 0.2553, 0.3662);
    check(15, 148, 0.0624, 0.1605);
    check(0, 10, 0, 0.2775);
  });

  it('bootstrap intervals hold the mean, are the same on every run, and narrow with more rows', () => {
    const values = Array.from({ length: 40 }, (_, index) => (index % 4 === 0 ? 0 : 1));
    const interval = bootstrapMeanInterval(values);
    expect(interval.low).toBeLessThan(0.75);
    expect(interval.high).toBeGreaterThan(0.75);
    expect(bootstrapMeanInterval(values)).toEqual(interval);
    const more = bootstrapMeanInterval([...values, ...values, ...values, ...values]);
    expect(more.high - more.low).toBeLessThan(interval.high - interval.low);
    expect(bootstrapMeanInterval([0.5])).toEqual({ low: 0.5, high: 0.5 });
  });

  it('McNemar\'s exact test and the paired comparison', () => {
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(6, 0)).toBeCloseTo(0.03125, 8);
    expect(mcnemarExact(5, 2)).toBeCloseTo(0.453125, 8);
    const pairs = Array.from({ length: 20 }, (_, index) => ({ baseline: 1, current: index < 8 ? 0 : 1, baselinePassed: true, currentPassed: index >= 8 }));
    expect(pairedComparison(pairs)).toMatchObject({ pairs: 20, newlyFailed: 8, newlyPassed: 0, worse: true });
    const noise = Array.from({ length: 20 }, (_, index) => ({ baseline: index === 3 ? 0 : 1, current: index === 5 ? 0 : 1, baselinePassed: index !== 3, currentPassed: index !== 5 }));
    expect(pairedComparison(noise)).toMatchObject({ difference: 0, worse: false });
  });

  it('--min-score for every model or per model', () => {
    expect(parseMinimumScores('0.8,cheap=0.6')).toEqual({ all: 0.8, models: new Map([['cheap', 0.6]]) });
    expect(() => parseMinimumScores('80')).toThrow('--min-score expects scores from 0 to 1');
    const summary = (model: string, meanScore: number) => ({ model, meanScore } as Parameters<typeof evaluateGates>[0][number]);
    const gates = evaluateGates([summary('good', 0.9), summary('cheap', 0.65)], { minimum: parseMinimumScores('0.8,cheap=0.6') });
    expect(gates.map((gate) => gate.passed)).toEqual([true, true]);
    expect(() => evaluateGates([summary('good', 0.9)], { minimum: parseMinimumScores('gpt=0.5') })).toThrow("names the model 'gpt'");
  });
});
