/** The validated, resolved shapes of agents.yaml and recipes, as the rest of the runtime sees them. */
import type { SourceLocation } from '../contract/errors.js';
import type { CheckDefinition, RetryPolicy } from './check-types.js';
import type { JsonSchema, SandboxSettings } from '../contract/tool.js';
import type { SettingLocations } from './setting-locations.js';
import type { YamlSource } from './yaml-source.js';
import type { StepBudgets } from '../contract/step-kind.js';

export interface ModelProfileConfig {
  name: string;
  provider: 'openai' | 'azure' | 'ollama' | 'openai-compatible';
  baseUrl?: string;
  apiKeyEnv?: string;
  model?: string;
  maxTokens?: number;
  temperature?: number;
  contextWindow?: number;
  vision: boolean;
  reasoning?: boolean;
  reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high';
  /** Stream replies; undefined streams only when someone watches the text arrive. */
  stream?: boolean;
  /** The longest a whole reply may take, streamed or not. */
  timeoutSeconds: number;
  /** The longest gap between chunks of a streamed reply; undefined means the default (config/defaults.ts). */
  streamIdleTimeoutSeconds?: number;
  apiVersion?: string;
  deployment?: string;
  headers: Record<string, string>;
  /** Header name to the environment variable holding its value: credentials stay out of YAML. */
  headersEnv?: Record<string, string>;
  retry: RetrySettings;
  /** Shared by every client of this profile in the process; undefined means no limit. */
  rateLimit?: RateLimitSettings;
  price?: TokenPrices;
  /** Names of the profiles to fall back to, in order. */
  fallback: string[];
  /** The fallback profiles themselves, once the recipe is resolved. */
  fallbackProfiles?: ModelProfileConfig[];
  fallbackCooldownSeconds: number;
  cache: 'automatic' | 'explicit';
  location?: SourceLocation;
  /** Defined by the package's own agents.yaml; a profile from any other file may not choose where keys go. */
  trusted?: boolean;
}

export interface RateLimitSettings {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  maxConcurrent?: number;
}

export interface RetrySettings {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterSeconds: number;
}

export type PermissionAnswer = 'allow' | 'ask' | 'deny';

/** One file's `permissions:` block, as written (rules are read by config/permission-rules.ts). */
export interface PermissionSettings {
  /** The answer for a call no rule names. */
  default: PermissionAnswer;
  allow: string[];
  ask: string[];
  deny: string[];
  /** `deny`: a call that would need approval is refused instead, with a reason the model sees. */
  onAsk: 'ask' | 'deny';
  /** Where each rule was written, by list and index, for `manus validate`. */
  locations?: Record<'allow' | 'ask' | 'deny', Array<SourceLocation | undefined>>;
}

/** A block with the file it came from, as the run's policy holds it. */
export interface PermissionBlock {
  /** Who wrote it, for events and messages: "your config", "agent 'swe'", "the recipe", "step 'draft'". */
  source: string;
  settings: PermissionSettings;
}

/**
 * The run's permissions: every file's block, each deciding on its own. The strictest answer among
 * them stands (deny, then ask, then allow), so a block added by a recipe or pack can only tighten.
 */
export interface PermissionPolicy {
  blocks: PermissionBlock[];
}

export interface AgentConfig {
  name: string;
  description: string;
  systemPrompt: string;
  nextStepPrompt?: string;
  tools: string[];
  maxSteps: number;
  maxObserve: number;
  toolChoice: 'auto' | 'required' | 'none';
  parallelToolCalls: boolean;
  finishOnText: boolean;
  stuckAfter: number;
  /** Failed tool calls in a row before a nudge; twice as many stop the run. 0 turns the rule off. */
  errorStreak: number;
  compaction: CompactionSettings;
  llm: string;
  contextProviders: string[];
  sandbox?: SandboxSettings;
  permissions: PermissionSettings;
  /** The run's policy for this agent (its block with the user's, the recipe's, ...), once a recipe is resolved. */
  permissionPolicy?: PermissionPolicy;
  toolSettings: Record<string, Record<string, unknown>>;
  location?: SourceLocation;
  /** Where each tool name was written, for "not available" messages. */
  toolLocations: Record<string, SourceLocation>;
  /** Files its `{file: ...}` prompts were read from: the next run reads them again. */
  promptFiles?: string[];
  /** Which file defined the agent, and whether that file is trusted to loosen anything. */
  origin?: AgentOrigin;
  /** Where its sandbox, permission and browser settings were written. */
  settingLocations?: SettingLocations;
  /** The pack whose agents file defines it. */
  pack?: string;
}

/**
 * Only the package's own agents.yaml is trusted. An agents.yaml in the current folder or beside
 * a recipe ships with a project or a recipe: its agents may tighten, never loosen.
 */
export interface AgentOrigin {
  file: string;
  trusted: boolean;
}

export interface AgentsConfig {
  files: string[];
  profiles: Map<string, ModelProfileConfig>;
  agents: Map<string, AgentConfig>;
  /** The agents as the trusted files (the package's agents.yaml) define them, before others replace them. */
  trustedAgents: Map<string, AgentConfig>;
  /** MCP servers the files declare for their agents, later files replacing earlier ones by name. */
  mcpServers: McpServerConfig[];
  /** Remote A2A agents the files declare, later files replacing earlier ones by name. */
  a2aAgents?: A2aAgentConfig[];
  /** Agents that more than one pack defines, with where each does: a recipe names the one it means as `name@pack`. */
  ambiguousAgents?: Map<string, Array<{ pack: string; location?: SourceLocation }>>;
}

export type ParameterValue = string | number | boolean | string[];

export interface RecipeParameter {
  name: string;
  type: 'string' | 'number' | 'boolean' | 'enum' | 'list';
  description?: string;
  required: boolean;
  default?: ParameterValue;
  values?: string[];
  location?: SourceLocation;
}

export interface RecipeBudgets {
  steps?: number;
  tokens?: number;
  timeSeconds?: number;
  cost?: number;
}

export interface Recipe {
  file: string;
  name: string;
  description: string;
  parameters: RecipeParameter[];
  promptTemplate?: string;
  /** The file a `{file: ...}` prompt was read from. */
  promptFile?: string;
  /** An agent name to look up, or an agent declared inline; none for a flow. */
  agent?: string | AgentConfig;
  /** Steps run in order instead of one agent. */
  flow?: FlowDefinition;
  agentLocation?: SourceLocation;
  pluginFolders: Array<{ path: string; location?: SourceLocation }>;
  /** Installed packs whose agents and plugins the recipe uses, by package name. */
  packs: Array<{ name: string; location?: SourceLocation }>;
  budgets: RecipeBudgets;
  response?: JsonSchema;
  /** The workspace folder, a template that may use the parameters. */
  workspace?: string;
  sandbox?: SandboxSettings;
  permissions?: PermissionSettings;
  toolSettings: Record<string, Record<string, unknown>>;
  answers: Record<string, string>;
  checks: CheckDefinition[];
  retry: RetryPolicy;
  mcpServers: McpServerConfig[];
  /** Remote A2A agents the recipe declares for its agents. */
  a2aAgents?: A2aAgentConfig[];
  /** Where its sandbox, permission, browser and workspace settings were written. */
  settingLocations?: SettingLocations;
}

import type { TokenPrices } from '../contract/token-usage.js';

export type { TokenPrices };

/** When and how the loop compacts a long conversation (kernel/context-compaction.ts). */
export interface CompactionSettings {
  /** Compact when a request would use more than this fraction of the context window. */
  threshold: number;
  /** Messages at the end that are always kept word for word (more when a tool call needs its results). */
  keepRecentMessages: number;
}

/** A literal value, or the name of one of the user's environment variables. */
export type McpEnvironmentValue = string | { env: string };

export type McpTransportConfig =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, McpEnvironmentValue>; cwd: string }
  | { kind: 'http'; url: string; headers: Record<string, McpEnvironmentValue> };

/** Where a server was declared decides where it may run (see features/mcp/launch-place.ts). */
export type McpServerOrigin = 'package' | 'user' | 'command-line' | 'project';

/** What the runtime's own connections on the agent's behalf may reach: the user's `network` settings only. */
export interface NetworkAccess {
  /** Loopback, private, link-local and metadata addresses too (`network.allow_private` in the user's config). */
  allowPrivate: boolean;
  /**
   * `network.only` in the user's config: every connection on the agent's behalf, sandboxed code
   * included, reaches only these hosts; absent, no such ceiling.
   */
  only?: readonly string[];
}

export interface McpServerConfig {
  name: string;
  transport: McpTransportConfig;
  tools: { allow?: string[]; deny: string[] };
  required: boolean;
  startupTimeoutSeconds: number;
  callTimeoutSeconds: number;
  /** The largest message read from the server; a longer one is cut off while it is read. */
  maxResultBytes: number;
  /** The file that declared it (or names the .mcp.json it came from); the current folder for `--mcp`. */
  declaredIn: string;
  origin: McpServerOrigin;
  location?: SourceLocation;
}

/** A remote agent spoken to over A2A, offered to the model as the tool `a2a_<name>`. */
export interface A2aAgentConfig {
  name: string;
  /** The agent's base URL; its card is below it. */
  url: string;
  description?: string;
  /** Header name to the user's environment variable holding its value. */
  headersEnv: Record<string, string>;
  timeoutSeconds: number;
  declaredIn: string;
  /** As for MCP servers: `user` and `package` are trusted; `project` sends credentials only with `--trust env`. */
  origin: McpServerOrigin;
  location?: SourceLocation;
}

/** A recipe's `flow:` as read from YAML (config/flow-definition.ts reads it). */
export interface FlowStepDefinition {
  /** The step's name; a fan-out's `step:` has its parent's. */
  name: string;
  kind: string;
  /** Where the step is in its YAML file, to locate problems with its fields. */
  yamlPath: Array<string | number>;
  location?: SourceLocation;
  budgets: StepBudgets;
  continueOnFailure: boolean;
  /** Rules for the agents the step runs, decided beside theirs. */
  permissions?: PermissionSettings;
  /** The fields beyond name, kind, budgets, permissions and continue_on_failure, as written. */
  fields: Record<string, unknown>;
  /** agent steps: a name from agents.yaml, or the agent written inline. */
  agent?: string | AgentConfig;
  prompt?: string;
  response?: JsonSchema;
  /** parallel steps: named steps at once, or one step for each item of `forEach`. */
  steps?: FlowStepDefinition[];
  step?: FlowStepDefinition;
  forEach?: string;
  maxConcurrency?: number;
}

export interface FlowDefinition {
  steps: FlowStepDefinition[];
  /** A template for the flow's answer; the last step's answer when not given. */
  answer?: string;
  /** The recipe's YAML, for the fields of kinds that load later. */
  source: YamlSource;
}
