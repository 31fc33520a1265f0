import { defineTool } from '../contract/tool.js';

/** The `terminate` tool: the kernel's own, so every agent can end its run the same way. */
export default defineTool({
  name: 'terminate',
  description:
    'Finish the task. Call it once the request is fully met (status "success") or when it cannot be met (status "failure"). ' +
    'Put the final answer for the user in "message".',
  parameters: {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['success', 'failure'], description: 'Whether the task was accomplished.' },
      message: { type: 'string', description: 'The final answer or, on failure, why the task could not be done.' },
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
