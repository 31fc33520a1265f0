import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { exitCodeForError } from '../cli/exit-codes.js';
import { HumanInputNeededError, InterruptedError, PermissionDeniedError, ToolError } from '../runtime/contract/errors.js';
import { createHumanChannel } from '../runtime/services/human-channel.js';
import type { HumanChannel } from '../runtime/contract/tool.js';
import askHuman from '../plugins/ask_human/ask_human.js';
import { createTestToolContext } from './support/tool-context.js';

const roots: string[] = [];

function contextWith(overrides: Parameters<typeof createTestToolContext>[0]) {
  const harness = createTestToolContext(overrides);
  roots.push(harness.root);
  return harness;
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

async function outcome(promise: Promise<unknown> | unknown): Promise<unknown> {
  return Promise.resolve(promise).then(
    (value) => value,
    (error: unknown) => error,
  );
}

describe('ask_human', () => {
  it('returns the scripted answers in order, accepting OpenManus\'s "inquire"', async () => {
    const harness = contextWith({ answers: ['Kyoto', 'yes'] });
    expect(await askHuman.execute({ question: 'Which city first?' }, harness.context)).toBe('Kyoto');
    expect(await askHuman.execute({ inquire: 'Book the hotel?' }, harness.context)).toBe('yes');
  });

  it('passes the question, the required setting and the abort signal to the channel', async () => {
    const received: Array<{ question: string; required?: boolean; signal?: AbortSignal }> = [];
    const human: HumanChannel = {
      async ask(question, options) {
        received.push({ question, ...options });
        return '';
      },
    };
    const harness = contextWith({ human, settings: { required: true } });
    expect(await askHuman.execute({ question: 'Proceed?' }, harness.context)).toBe('The human gave an empty answer.');
    expect(received).toEqual([{ question: 'Proceed?', required: true, signal: harness.context.signal }]);
    const optional = contextWith({ human });
    await askHuman.execute({ question: 'Anything else?' }, optional.context);
    expect(received[1].required).toBe(false);
  });

  it('turns a failing channel into an error the model sees', async () => {
    const harness = contextWith({ answers: [] });
    const error = await outcome(askHuman.execute({ question: 'Anyone there?' }, harness.context));
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe('human_unavailable');
    expect((error as ToolError).message).toContain('no answer scripted for: Anyone there?');
  });

  it('lets a denied permission through unchanged, so the run stops with exit 5', async () => {
    const denied = new PermissionDeniedError('a required question has no one to answer it');
    const harness = contextWith({
      human: {
        async ask() {
          throw denied;
        },
      },
    });
    expect(await outcome(askHuman.execute({ question: 'Deploy?' }, harness.context))).toBe(denied);
  });

  it('lets a question no one can answer through, so the run stops waiting for input (exit 5)', async () => {
    const harness = contextWith({ human: createHumanChannel({ interactive: false, answers: [], recipeAnswers: { colour: 'green' } }) });
    const error = await outcome(askHuman.execute({ question: 'Which city first?' }, harness.context));
    expect(error).toBeInstanceOf(HumanInputNeededError);
    expect(error).toMatchObject({ code: 'needs_input', question: 'Which city first?' });
    expect(exitCodeForError(error)).toBe(5);
    expect(await askHuman.execute({ question: 'Favourite colour?' }, harness.context)).toBe('green');
  });

  it('lets an interruption through unchanged', async () => {
    const interrupted = new InterruptedError();
    const harness = contextWith({
      human: {
        async ask() {
          throw interrupted;
        },
      },
    });
    expect(await outcome(askHuman.execute({ question: 'Still there?' }, harness.context))).toBe(interrupted);
  });

  it('requires a question', async () => {
    const harness = contextWith({ answers: ['unused'] });
    const error = await outcome(askHuman.execute({}, harness.context));
    expect((error as ToolError).code).toBe('missing_parameter');
  });
});
