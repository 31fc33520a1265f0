/**
 * The contract for an eval's scorer: a plain object a plugin file default-exports, made with
 * `defineScorer`. It sees one finished run (its answer, what it did, what it cost, the row's
 * expectations) and gives a score in [0, 1] with a reason; the eval decides what passed.
 */

/** One tool call the run made, in order. */
export interface ScoredToolCall {
  name: string;
  arguments: unknown;
  isError: boolean;
}

export interface ScorerInput {
  /** The run's final answer as text. */
  answer: string;
  /** The structured answer, when the recipe declares `response:`. */
  structured?: unknown;
  /** How the run ended: success, failure, checks-failed, budget-exhausted, ... */
  status: string;
  /** The row's parameters, as the recipe got them. */
  parameters: Readonly<Record<string, string>>;
  /** The row's `expected:` value. */
  expected: unknown;
  toolCalls: readonly ScoredToolCall[];
  /** Model steps the run took. */
  steps: number;
  /** US dollars, when the model's prices are known. */
  cost?: number;
  totalTokens: number;
  /** Reads a file the run left in its workspace, or undefined when there is none. */
  readFile(path: string): string | undefined;
  /** The scorer's `options:` from the eval file. */
  options: Readonly<Record<string, unknown>>;
}

export interface Score {
  /** In [0, 1]; a value outside is clamped and noted. */
  score: number;
  reason?: string;
}

export interface ScorerDefinition {
  name: string;
  description?: string;
  score(input: ScorerInput): Score | Promise<Score>;
}

/** Identity helper: types a plugin scorer. */
export function defineScorer(definition: ScorerDefinition): ScorerDefinition {
  return definition;
}
