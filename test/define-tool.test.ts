import { describe, expect, expectTypeOf, it } from 'vitest';
import { defineTool, type SchemaInput } from 'manus-runtime';

// The type assertions here are checked by `npm run typecheck`; the runtime assertions by vitest.
describe('defineTool reads the input type from the parameters schema', () => {
  it('gives required properties their types and makes the others optional', () => {
    const tool = defineTool({
      name: 'forecast',
      description: 'A forecast.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          days: { type: 'integer', minimum: 1 },
          units: { type: 'string', enum: ['metric', 'imperial'] },
          hourly: { type: 'boolean' },
          tags: { type: 'array', items: { type: 'string' } },
          near: { type: 'object', properties: { latitude: { type: 'number' }, longitude: { type: 'number' } }, required: ['latitude', 'longitude'] },
          detail: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          note: { description: 'anything' },
        },
        required: ['city', 'days'],
      },
      execute(input) {
        expectTypeOf(input).toEqualTypeOf<{
          city: string;
          days: number;
          units?: 'metric' | 'imperial';
          hourly?: boolean;
          tags?: string[];
          near?: { latitude: number; longitude: number };
          detail?: string | null;
          note?: unknown;
        }>();
        return `${input.city} for ${input.days} day(s)`;
      },
    });
    expect(tool.execute({ city: 'Lyon', days: 2 }, undefined as never)).toBe('Lyon for 2 day(s)');
  });

  it('names an input type from a schema declared apart, for helpers that take the input', () => {
    const parameters = {
      type: 'object',
      properties: { command: { type: 'string', enum: ['start', 'stop'] }, force: { type: 'boolean' } },
      required: ['command'],
    } as const;
    type ServiceInput = SchemaInput<typeof parameters>;
    expectTypeOf<ServiceInput>().toEqualTypeOf<{ command: 'start' | 'stop'; force?: boolean }>();
    const describeCall = (input: ServiceInput) => `${input.command}${input.force ? ' (forced)' : ''}`;
    const tool = defineTool({ name: 'service', description: 'Starts or stops.', parameters, execute: describeCall });
    expect(tool.execute({ command: 'stop', force: true }, undefined as never)).toBe('stop (forced)');
  });

  it('still takes an input type named by the author', () => {
    const tool = defineTool<{ text: string }>({
      name: 'shout',
      description: 'Upper-cases a text.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      execute: ({ text }) => text.toUpperCase(),
    });
    expect(tool.execute({ text: 'hi' }, undefined as never)).toBe('HI');
  });
});
