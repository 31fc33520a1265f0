/**
 * How the agent's questions reach a person. On a terminal the question is asked without blocking
 * the event loop; otherwise answers come from --answer values (in order) and the recipe's
 * `answers:` (matched by a text the question contains), and a question nobody answers fails closed.
 */
import { createInterface } from 'node:readline/promises';
import { PermissionDeniedError, ToolError } from './errors.js';
import type { HumanChannel } from './tool.js';

export interface HumanChannelOptions {
  interactive: boolean;
  answers: string[];
  recipeAnswers: Record<string, string>;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  onAsked?: (question: string, answer: string, source: 'terminal' | 'answer' | 'recipe') => void;
}

export function createHumanChannel(options: HumanChannelOptions): HumanChannel {
  const queued = [...options.answers];
  let asking = Promise.resolve();
  return {
    async ask(question, askOptions = {}) {
      const fromRecipe = Object.entries(options.recipeAnswers).find(([key]) => question.toLowerCase().includes(key.toLowerCase()));
      if (queued.length > 0) {
        const answer = queued.shift()!;
        options.onAsked?.(question, answer, 'answer');
        return answer;
      }
      if (options.interactive) {
        // One question at a time on the terminal, even when tools ask concurrently.
        const answer = asking.then(() => askOnTerminal(question, options, askOptions.signal));
        asking = answer.then(() => undefined, () => undefined);
        const text = await answer;
        options.onAsked?.(question, text, 'terminal');
        return text;
      }
      if (fromRecipe) {
        options.onAsked?.(question, fromRecipe[1], 'recipe');
        return fromRecipe[1];
      }
      const reason = `no one can answer "${question}": the run is not interactive; pass --answer TEXT or add the answer under answers: in the recipe`;
      if (askOptions.required) throw new PermissionDeniedError(reason);
      throw new ToolError(reason, 'no_answer');
    },
  };
}

/** Asks one question on the terminal (stdin and stderr unless told otherwise) and returns the trimmed answer. */
export async function askOnTerminal(
  question: string,
  options: Pick<HumanChannelOptions, 'input' | 'output'>,
  signal?: AbortSignal,
): Promise<string> {
  const terminal = createInterface({ input: options.input ?? process.stdin, output: options.output ?? process.stderr, terminal: true });
  try {
    return (await terminal.question(`\n${question}\n> `, { signal })).trim();
  } finally {
    terminal.close();
  }
}
