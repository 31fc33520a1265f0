import { defineTool } from './tool.js';

/**
 * The `terminate` tool. It lives in the kernel, and plugins/terminate.ts re-exports it, so a run
 * loads it from the command's bundle instead of loading the runtime's public entry for it.
 */
export default defineTool<{ status: 'success' | 'failure'; message?: string }>({
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
  execute({ status, message }) {
    const answer = message ?? '';
    return { content: `The run finished with status ${status}.`, finish: { status, answer } };
  },
});
