/**
 * The `a2a_<name>` tools an agent lists, each made from the remote agent declared by that name. A
 * name a plugin also gives is an error naming both sources, never a silent pick; a name no file
 * declares is an error listing those that are declared.
 */
import { formatLocation, type Diagnostic } from '../../contract/errors.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import type { AnyToolDefinition } from '../../contract/tool.js';
import type { AgentConfig } from '../../config/types.js';
import { a2aToolName, a2aToolPrefix, type A2aAgentConfig } from './a2a-config.js';
import { a2aTool } from './a2a-tool.js';

export interface A2aAgentTools {
  /** Every `a2a_` name of the agent's that is not a plugin's: looked up here, never as a plugin. */
  names: string[];
  tools: Map<string, AnyToolDefinition>;
  /** The remote agents the tools call. */
  agents: A2aAgentConfig[];
}

export function a2aAgentTools(
  agent: Pick<AgentConfig, 'name' | 'tools' | 'toolLocations' | 'location'>,
  declared: readonly A2aAgentConfig[],
  plugins: ReadonlyMap<string, { file: string }>,
  environment: Record<string, string | undefined>,
  diagnostics: Diagnostic[],
): A2aAgentTools {
  const byTool = new Map(declared.map((remote) => [a2aToolName(remote.name), remote]));
  const result: A2aAgentTools = { names: [], tools: new Map(), agents: [] };
  for (const name of agent.tools) {
    if (!name.startsWith(a2aToolPrefix)) continue;
    const remote = byTool.get(name);
    const plugin = plugins.get(name);
    const location = agent.toolLocations[name] ?? agent.location;
    if (remote && plugin) {
      diagnostics.push({
        severity: 'error',
        message: `agent '${agent.name}' lists the tool '${name}', which more than one source would give: the plugin tool in ${plugin.file} and the A2A agent '${remote.name}' (declared in ${formatLocation(remote.location ?? { file: remote.declaredIn })}); rename one of them`,
        location,
      });
      result.names.push(name);
      continue;
    }
    if (plugin) continue;
    result.names.push(name);
    if (!remote) {
      const known = [...byTool.keys()];
      diagnostics.push({
        severity: 'error',
        message: `agent '${agent.name}' lists the tool '${name}', but no A2A agent named '${name.slice(a2aToolPrefix.length)}' is declared under a2a: in an agents file or your config${known.length > 0 ? didYouMean(name, known) : ''}`,
        location,
      });
      continue;
    }
    result.tools.set(name, a2aTool(remote, environment));
    result.agents.push(remote);
  }
  return result;
}
