/**
 * Structured final answers: when a recipe declares `response:` (a JSON Schema), the run ends only
 * with an answer that satisfies it, given through the `create_chat_completion` tool or as JSON text.
 */
import type { ValidateFunction } from 'ajv';
import { compileJsonSchema } from '../contract/json-schema.js';
import { defineTool, type AnyToolDefinition, type JsonSchema } from '../contract/tool.js';

export const structuredAnswerToolName = 'create_chat_completion';

export type AnswerCheck = { ok: true; value: unknown } | { ok: false; problems: string[] };

export class FinalAnswerSchema {
  readonly schema: JsonSchema;

  constructor(schema: JsonSchema) {
    this.schema = schema;
  }

  /** Compiled on first use (and cached by schema), so a run compiles nothing it never checks. */
  private get validate(): ValidateFunction {
    return compileJsonSchema(this.schema);
  }

  check(candidate: unknown): AnswerCheck {
    const value = typeof candidate === 'string' ? parseJsonText(candidate) : candidate;
    if (value === undefined) return { ok: false, problems: ['the answer is not JSON'] };
    if (this.validate(value)) return { ok: true, value };
    return {
      ok: false,
      problems: (this.validate.errors ?? []).map((error) => `${error.instancePath || 'the answer'} ${error.message ?? 'is invalid'}`),
    };
  }

  correctionRequest(problems: string[]): string {
    return `Your final answer does not match the required format: ${problems.join('; ')}. ` +
      `Call ${structuredAnswerToolName} with "response" set to a value matching this JSON Schema: ${JSON.stringify(this.schema)}`;
  }

  /** The tool the model calls with its answer; the loop counts failed attempts so a bad answer gets one correction. */
  tool(): AnyToolDefinition {
    return defineTool<{ response: unknown }>({
      name: structuredAnswerToolName,
      description: 'Give the final answer in the required structured format. This ends the task.',
      parameters: {
        type: 'object',
        properties: { response: { ...this.schema, description: 'The final answer, in the required format.' } },
        required: ['response'],
      },
      finishesRun: true,
      replaySafe: true,
      execute: ({ response }) => ({
        content: 'The answer was recorded.',
        finish: { status: 'success', answer: JSON.stringify(response, null, 2), structured: response },
      }),
    });
  }
}

/** Reads JSON from a model's text, tolerating a Markdown code fence around it. */
function parseJsonText(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  try {
    return JSON.parse((fenced ? fenced[1] : text).trim());
  } catch {
    return undefined;
  }
}
