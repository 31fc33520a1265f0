/**
 * Remote A2A agents as declared: `a2a:` in an agents file or the user's config. Each is offered to
 * the model as one tool, `a2a_<name>`, which an agent names in its tools like any other.
 */
import type { Diagnostic } from '../../contract/errors.js';
import { a2aAgentDefaults } from '../../config/defaults.js';
import type { A2AAgentsYaml } from '../../config/schema-types.generated.js';
import type { A2aAgentConfig, McpServerOrigin } from '../../config/types.js';
import { locateKey, type YamlSource } from '../../config/yaml-source.js';

export type { A2aAgentConfig } from '../../config/types.js';

export const a2aToolPrefix = 'a2a_';

/** What the model gives an `a2a_<name>` tool. */
export interface A2aToolInput {
  message: string;
  skill?: string;
  arguments?: Record<string, unknown>;
  task_id?: string;
}

/** The tool an agent names to call the remote agent. */
export function a2aToolName(agent: string): string {
  return `${a2aToolPrefix}${agent}`;
}

/** Declared by the user (their config) or the package: their credentials go without a grant. */
export function isTrustedA2aAgent(agent: A2aAgentConfig): boolean {
  return agent.origin !== 'project';
}

/** Reads the `a2a:` mapping of a YAML file the schema has accepted. */
export function readA2aAgents(source: YamlSource, path: ReadonlyArray<string>, raw: A2AAgentsYaml | undefined, origin: McpServerOrigin, diagnostics: Diagnostic[]): A2aAgentConfig[] {
  if (!raw) return [];
  return Object.entries(raw).map(([name, value]) => {
    const location = locateKey(source, path, name);
    if (!/^[A-Za-z0-9_-]+$/.test(name)) {
      diagnostics.push({ severity: 'error', message: `A2A agent name '${name}' may hold only letters, digits, '_' and '-': it becomes the tool name ${a2aToolName(name)}`, location });
    }
    return {
      name,
      url: value.url,
      description: value.description,
      headersEnv: value.headers_env ?? {},
      timeoutSeconds: value.timeout_seconds ?? a2aAgentDefaults.timeout_seconds,
      declaredIn: source.file,
      origin,
      location,
    };
  });
}

/** Later declarations of a name replace earlier ones, as for MCP servers. */
export function mergeA2aAgents(...lists: Array<A2aAgentConfig[] | undefined>): A2aAgentConfig[] {
  const byName = new Map<string, A2aAgentConfig>();
  for (const agent of lists.flatMap((list) => list ?? [])) byName.set(agent.name, agent);
  return [...byName.values()];
}

/** The user's variables an agent's requests carry: hidden in every sink, and each needs to be set. */
export function a2aEnvironmentVariables(agent: A2aAgentConfig): string[] {
  return [...new Set(Object.values(agent.headersEnv))];
}
