/** A flow as a run needs it: its definition, the kinds its steps use, and each agent it may run. */
import type { ContextProviderDefinition } from '../contract/context-provider.js';
import type { AgentConfig, ModelProfileConfig, ParameterValue } from './types.js';
import type { FlowDefinition } from './flow-definition.js';
import type { AnyStepKindDefinition } from '../contract/step-kind.js';

export interface FlowAgent {
  /** With the permissions the recipe's trust review settled. */
  config: AgentConfig;
  /** Names of its tools among the run's, MCP servers' tools apart. */
  tools: string[];
  /** Its names for MCP servers' tools (`mcp_fs_read_file`, `mcp_fs_*`), offered once the servers start. */
  mcpToolNames: string[];
  /** Agents it may call as tools (`agent:<name>` in its tools), by name. */
  agentTools: string[];
  contextProviders: ContextProviderDefinition[];
  toolSettings: Record<string, Record<string, unknown>>;
  profile: ModelProfileConfig;
  modelOverride?: string;
}

export interface FlowPlan {
  definition: FlowDefinition;
  stepKinds: ReadonlyMap<string, AnyStepKindDefinition>;
  /** The recipe's parameters with the values given. */
  parameters: Record<string, ParameterValue>;
  /** Keyed as steps refer to agents: a name, or the inline agent itself. */
  agents: ReadonlyMap<unknown, FlowAgent>;
}
