/**
 * A remote A2A agent as a tool. The definition is plain data, so a run that lists the tool pays
 * nothing for the A2A SDK until the model calls it; the call then loads the client.
 */
import { defineTool, type AnyToolDefinition } from '../../contract/tool.js';
import { a2aToolName, type A2aAgentConfig, type A2aToolInput } from './a2a-config.js';

/** `environment` gives the values of the agent's `headers_env`, read when a call is made. */
export function a2aTool(agent: A2aAgentConfig, environment: Record<string, string | undefined>): AnyToolDefinition {
  return defineTool<A2aToolInput>({
    name: a2aToolName(agent.name),
    description: `${agent.description ?? `Sends a task to the remote agent '${agent.name}' over A2A, and returns its answer and the files it made.`} When the agent needs input, the result says so with the task's id: call again with that task_id and the answer as the message.`,
    parameters: {
      type: 'object',
      properties: {
        message: { type: 'string', minLength: 1, description: 'The task for the agent, or the answer to its question.' },
        skill: { type: 'string', minLength: 1, description: 'Which of its skills to run, when it has several.' },
        arguments: { type: 'object', description: "The skill's arguments, sent as a data part." },
        task_id: { type: 'string', minLength: 1, description: 'The task to continue: the id a result that needed input gave.' },
      },
      required: ['message'],
      additionalProperties: false,
    },
    async execute(input, context) {
      const { callA2aAgent } = await import('./a2a-client.js');
      return callA2aAgent(agent, input, context, environment);
    },
  });
}
