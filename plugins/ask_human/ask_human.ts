/**
 * Asks the person running the agent a question and returns the answer. How the question reaches
 * them (a terminal, `--answer` values, a recipe's defaults) is the runtime's business. Where no one
 * is watching, the runtime stops the run as waiting for input, and the user resumes it with the
 * answer; only a channel that fails some other way becomes an error the model reads.
 */
import { defineTool, ManusError, ToolError } from 'manus-runtime';


export default defineTool({
  name: 'ask_human',
  description: 'Ask the user a question only they can answer, and wait for the answer.',
  parameters: {
    type: 'object',
    properties: {
      question: { type: 'string', minLength: 1 },
      inquire: { type: 'string', minLength: 1, description: 'Same as question.' },
    },
  },
  async execute(input, context) {
    const question = input.question ?? input.inquire;
    if (question === undefined) throw new ToolError('Parameter question is required.', 'missing_parameter');
    let answer: string;
    try {
      answer = await context.human.ask(question, { required: context.settings.required === true, signal: context.signal });
    } catch (error) {
      if (context.signal.aborted || mustStopTheRun(error)) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new ToolError(`No answer could be obtained from the human: ${reason}`, 'human_unavailable');
    }
    return answer.trim() === '' ? 'The human gave an empty answer.' : answer;
  },
});

/**
 * A denied permission and a question no one can answer end the run (exit 5), and an error of the
 * runtime's own kind other than a tool failure is the kernel's to handle. Recognised by marker, so
 * a plugin loaded with its own copy of the runtime module still recognises the kernel's errors.
 */
function mustStopTheRun(error: unknown): boolean {
  return ManusError.isInstance(error) && !ToolError.isInstance(error);
}
