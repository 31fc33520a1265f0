/**
 * How the agent's questions reach a person. On a terminal the question is asked without blocking
 * the event loop; otherwise answers come from --answer values (in order) and the recipe's
 * `answers:` (matched by a text the question contains). A question nobody answers stops the run as
 * waiting for input (resumable with the answer); a permission prompt nobody answers is a denial.
 * Permission prompts are the user's alone: the terminal or --answer, never the recipe's answers.
 * A server that runs recipes for a client (`manus a2a serve`) passes `asker`: the question then
 * goes to that client, who started the task under the user's guard, in place of the terminal.
 */
import { createInterface } from 'node:readline/promises';
import { HumanInputNeededError, PermissionDeniedError } from '../contract/errors.js';
import type { HumanChannel } from '../contract/tool.js';
import { terminalText } from './terminal-text.js';

export interface HumanChannelOptions {
  interactive: boolean;
  answers: string[];
  recipeAnswers: Record<string, string>;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** Asks whoever the run works for, in place of the terminal; settles with their reply. */
  asker?: HumanAsker;
  onAsked?: (question: string, answer: string, source: 'terminal' | 'answer' | 'recipe' | 'client') => void;
}

export type HumanAsker = (question: string, options: { permission?: boolean; signal?: AbortSignal }) => Promise<string>;

export function createHumanChannel(options: HumanChannelOptions): HumanChannel {
  const queued = [...options.answers];
  let asking = Promise.resolve();
  return {
    async ask(question, askOptions = {}) {
      if (queued.length > 0) {
        const answer = queued.shift()!;
        options.onAsked?.(question, answer, 'answer');
        return answer;
      }
      if (options.asker) {
        const answer = await options.asker(question, askOptions);
        options.onAsked?.(question, answer, 'client');
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
      const fromRecipe = askOptions.permission
        ? undefined
        : Object.entries(options.recipeAnswers).find(([key]) => question.toLowerCase().includes(key.toLowerCase()));
      if (fromRecipe) {
        options.onAsked?.(question, fromRecipe[1], 'recipe');
        return fromRecipe[1];
      }
      if (askOptions.permission) {
        throw new PermissionDeniedError(`no one can answer "${question}": the run is not interactive; approve it with --answer yes (a recipe's answers: cannot)`);
      }
      // An answer the model invents around is worse than a run that waits: stop, and let the user resume with it.
      throw new HumanInputNeededError(question);
    },
  };
}

/** Asks one question on the terminal (stderr by default, so stdout stays the answer's) and returns the reply. */
export async function askOnTerminal(
  question: string,
  streams: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream },
  signal?: AbortSignal,
): Promise<string> {
  const terminal = createInterface({ input: streams.input ?? process.stdin, output: streams.output ?? process.stderr, terminal: true });
  // The prompt reads the terminal raw, so Ctrl-C reaches it as a key: pass it on as the signal it means.
  terminal.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  try {
    // The question is the model's text: shown terminal-safe.
    return (await terminal.question(`\n${terminalText(question)}\n> `, { signal })).trim();
  } finally {
    terminal.close();
  }
}

/** Whether a person's reply grants what was asked: "y" or "yes", in any case, spaces around allowed. */
export function isYes(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
}
