/**
 * `{ answer: matches_response }` and `{ answer_matches }`: checks on the final answer. The first
 * holds the answer to the recipe's `response:` schema, the second searches it for a pattern.
 */
import { FinalAnswerSchema } from '../../kernel/final-answer.js';
import { compileCheckPattern } from './check-pattern.js';
import type { CheckDefinition, CheckInput, CheckResult } from '../../config/check-types.js';

type AnswerCheck = Extract<CheckDefinition, { kind: 'answer' | 'answer_matches' }>;

export function runAnswerCheck(check: AnswerCheck, input: Pick<CheckInput, 'answer' | 'structured' | 'responseSchema'>): CheckResult {
  const started = performance.now();
  const detail = check.kind === 'answer' ? responseProblem(input) : answerPatternProblem(check.pattern, input.answer);
  return {
    name: check.name,
    kind: check.kind,
    passed: detail === undefined,
    detail: detail ?? (check.kind === 'answer' ? 'the answer matches the response schema' : `the answer matches /${check.pattern}/`),
    durationMs: Math.round(performance.now() - started),
  };
}

function responseProblem(input: Pick<CheckInput, 'answer' | 'structured' | 'responseSchema'>): string | undefined {
  if (!input.responseSchema) return 'the recipe declares no response schema to hold the answer to';
  const verdict = new FinalAnswerSchema(input.responseSchema).check(input.structured ?? input.answer);
  return verdict.ok ? undefined : `the answer does not match the response schema: ${verdict.problems.join('; ')}`;
}

function answerPatternProblem(pattern: string, answer: string): string | undefined {
  return compileCheckPattern(pattern).test(answer) ? undefined : `the answer has no match for /${pattern}/`;
}
