import { defineTool } from '../contract/tool.js';

/** The `terminate` tool: the kernel's own, so every agent can end its run the same way. */
export default defineTool({
  name: 'terminate',
  description: 'Finish once the task is done or cannot be done, with the final answer for the user in "message".',
  parameters: {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['success', 'failure'] },
      message: { type: 'string', description: 'The answer, or why the task cannot be done.' },
    },
    required: ['status'],
    additionalProperties: false,
  },
  finishesRun: true,
  replaySafe: true,
  execute({ status, message }) {
    const answer = message ?? '';
    return { content: `The run finished with status ${status}.`, finish: { status, answer } };
  },
});
