/** The validated, resolved shapes of agents.yaml and recipes, as the rest of the runtime sees them. */
import type { SourceLocation } from '../errors.js';
import type { CheckDefinition, RetryPolicy } from '../checks/check-types.js';
import type { CompactionSettings } from '../context-compaction.js';
import type { TokenPrices } from '../model/pricing.js';
import type { JsonSchema, SandboxSettings } from '../tool.js';

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
  timeoutSeconds: number;
  apiVersion?: string;
  deployment?: string;
  headers: Record<string, string>;
  retry: RetrySettings;
  price?: TokenPrices;
  location?: SourceLocation;
}

export interface RetrySettings {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterSeconds: number;
}

export interface PermissionSettings {
  deny: string[];
  ask: string[];
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
  compaction: CompactionSettings;
  llm: string;
  contextProviders: string[];
  sandbox?: SandboxSettings;
  permissions: PermissionSettings;
  toolSettings: Record<string, Record<string, unknown>>;
  location?: SourceLocation;
  /** Where each tool name was written, for "not available" messages. */
  toolLocations: Record<string, SourceLocation>;
  /** Files its `{file: ...}` prompts were read from: the next run reads them again. */
  promptFiles?: string[];
}

export interface AgentsConfig {
  files: string[];
  profiles: Map<string, ModelProfileConfig>;
  agents: Map<string, AgentConfig>;
}

export type ParameterValue = string | number | boolean;

export interface RecipeParameter {
  name: string;
  type: 'string' | 'number' | 'boolean' | 'enum';
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
  /** An agent name to look up, or an agent declared inline. */
  agent: string | AgentConfig;
  agentLocation?: SourceLocation;
  pluginFolders: Array<{ path: string; location?: SourceLocation }>;
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
}
