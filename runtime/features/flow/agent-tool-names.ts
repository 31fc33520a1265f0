/** How an agent names another it calls as a tool, and how the model sees that tool. */
import { unqualifiedName } from '../../kernel/plugin-loading/qualified-names.js';

/** The prefix of an agent's tool entry that names another agent to call (`agent:researcher`). */
export const agentToolPrefix = 'agent:';

/** The name the model calls another agent by: `agent_researcher`, also for `researcher@acme-pack`. */
export function agentToolName(agent: string): string {
  return `agent_${unqualifiedName(agent)}`;
}
