/**
 * What a resolved recipe hands to a run: every layer above the config reads a run through this
 * shape, and only runs/recipe/ builds it.
 */
import type { ContextProviderDefinition } from '../contract/context-provider.js';
import type { Diagnostic, SourceLocation } from '../contract/errors.js';
import type { AnyToolDefinition, SandboxSettings } from '../contract/tool.js';
import type { TrustGrant } from '../contract/trust-grants.js';
import type { FlowAgent, FlowPlan } from './flow-plan.js';
import type { Pack } from './pack-manifest.js';
import type { A2aAgentConfig, AgentConfig, AgentsConfig, McpServerConfig, ModelProfileConfig, NetworkAccess, Recipe } from './types.js';

export interface RecipeOverrides {
  prompt?: string;
  parameters?: Record<string, string>;
  /** A profile name from `llm:`, or a model id for the agent's profile. */
  model?: string;
  maxSteps?: number;
  maxTokens?: number;
  maxCost?: number;
  maxTimeSeconds?: number;
  workspace?: string;
  /** Grants the user gave on the command line (`--trust`). */
  trust?: TrustGrant[];
  /** The sandbox kind the user chose with `--sandbox`; it replaces the configured kind. */
  sandbox?: SandboxSettings['kind'];
  /** MCP servers the user added for this run (`--mcp`); all their tools are offered. */
  mcpServers?: McpServerConfig[];
}

export interface RunBudgets {
  steps: number;
  tokens?: number;
  timeSeconds?: number;
  /** US dollars. */
  cost?: number;
}

export interface RunPlan {
  recipe: Recipe;
  /** What the command line changed, kept so a resumed run resolves the recipe the same way. */
  overrides: RecipeOverrides;
  agent: AgentConfig;
  profile: ModelProfileConfig;
  /** A model id given on the command line that is not a profile name. */
  modelOverride?: string;
  task: string;
  /** The workspace folder as configured (relative to the current folder), when not the default. */
  workspace?: string;
  tools: Map<string, AnyToolDefinition>;
  /** Tools the run's tools call (their `calls`), loaded with them, offered to the model only if an agent lists them. */
  calledTools: Map<string, AnyToolDefinition>;
  contextProviders: ContextProviderDefinition[];
  budgets: RunBudgets;
  sandbox?: SandboxSettings;
  toolSettings: Record<string, Record<string, unknown>>;
  warnings: Diagnostic[];
  agentsConfig: AgentsConfig;
  /** What the user consented to: command-line grants and those in their own configuration. */
  trustGrants: ReadonlySet<TrustGrant>;
  /** What the recipe and its agents files ask for beyond what they may take; runs only when granted. */
  trustRequests: TrustRequest[];
  /** Every MCP server declared for the run, by the agents files, the user, the recipe and the command line. */
  mcpServers: McpServerConfig[];
  /** The remote A2A agents the run's agents call as tools (`a2a_<name>`). */
  a2aAgents?: A2aAgentConfig[];
  /** What the runtime's connections on the agent's behalf may reach: the user's `network` settings only. */
  networkAccess: NetworkAccess;
  /** The agent's tools that name MCP servers' tools (`mcp_fs_read_file`, `mcp_fs_*`): checked when those servers start. */
  mcpToolNames: string[];
  /** A flow's steps, kinds and agents, when the recipe is a flow; `agent` then stands for all of them. */
  flow?: FlowPlan;
  /** Agents the run's agents may call as tools (`agent:<name>`), by name. */
  callableAgents: ReadonlyMap<string, FlowAgent>;
  /** The recipe's own pack and the packs it names: their agents and plugins are the run's. */
  packs: Pack[];
}

/** A loosening a file asks for, which runs only with the user's grant. */
export interface TrustRequest {
  grant: TrustGrant;
  /** The setting as it takes effect, e.g. `sandbox.kind: host`. */
  setting: string;
  /** What it is compared with, when that is not plain from the setting. */
  detail?: string;
  location?: SourceLocation;
}
