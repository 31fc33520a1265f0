/**
 * Every configuration default, in one place and keyed as the YAML is written: what a run uses
 * when an agents file, a recipe or the user's config leaves a key out. Each is typed by the
 * schema's generated type, and test/config-schema-agreement.test.ts checks each value against the
 * schema and against the schema's own `default:` keywords.
 */
import { defaultSandboxImage } from './sandbox-image.js';
import type { AgentYaml, CheckYaml, A2AAgentYaml, McpServerYaml, PermissionsYaml, ProfileYaml, RecipeYaml, SandboxYaml, UserConfigYaml } from './schema-types.generated.js';

type SandboxObjectYaml = Exclude<SandboxYaml, string>;

export const agentDefaults = {
  description: '',
  system_prompt:
    'You are a capable assistant. Work step by step, use the tools you have, and finish with the terminate tool when the task is done.',
  tools: ['terminate'],
  max_steps: 20,
  max_observe: 10_000,
  tool_choice: 'auto',
  parallel_tool_calls: true,
  finish_on_text: true,
  compaction: { threshold: 0.8, keep_recent_messages: 6 },
  stuck_after: 3,
  error_streak: 5,
  llm: 'default',
  context_providers: [],
  tool_settings: {},
} satisfies AgentYaml;

export const permissionDefaults = { default: 'allow', allow: [], ask: [], deny: [], on_ask: 'ask' } as const satisfies PermissionsYaml;

export const profileDefaults = {
  provider: 'openai-compatible',
  vision: false,
  timeout_seconds: 120,
  stream_idle_timeout_seconds: 60,
  fallback_cooldown_seconds: 300,
  cache: 'automatic',
  api_version: '2024-10-21',
  headers: {},
  headers_env: {},
  retry: { max_attempts: 5, base_delay_ms: 500, max_delay_ms: 20_000, max_retry_after_seconds: 60 },
} satisfies ProfileYaml;

/** `sandbox: auto` and the limits of a sandbox that names none. */
export const sandboxDefaults = {
  kind: 'auto',
  network: false,
  image: defaultSandboxImage,
  memory_mb: 2048,
  cpus: 1,
  pids: 256,
  pass_env: [],
} satisfies SandboxObjectYaml;

export const recipeDefaults = {
  description: '',
  retry: { max_attempts: 1 },
} satisfies Partial<RecipeYaml>;

export const checkDefaults = { timeout_seconds: 300 } satisfies Partial<CheckYaml>;

export const userConfigDefaults = { trust: [], network: { allow_private: false } } satisfies Partial<UserConfigYaml>;

/** What an MCP server that leaves these out gets. */
export const a2aAgentDefaults = {
  timeout_seconds: 600,
} satisfies Omit<A2AAgentYaml, 'url'>;

export const mcpServerDefaults = {
  required: false,
  startup_timeout_seconds: 30,
  call_timeout_seconds: 120,
  max_result_mb: 10,
} satisfies McpServerYaml;
