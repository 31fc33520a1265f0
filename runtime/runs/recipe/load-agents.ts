/** Loads agents.yaml files: model profiles and named agents, later files overriding earlier ones. */
import type { Diagnostic } from '../../contract/errors.js';
import { readAgentDefinition } from '../../config/agent-definition.js';
import { sandboxHostDiagnostics } from '../../services/network/sandbox-hosts.js';
import { validateConfig } from '../../config/config-schemas.js';
import { profileDefaults } from '../../config/defaults.js';
import { literalSecretHeaders } from '../../config/literal-secrets.js';
import type { AgentsYaml, ProfileYaml } from '../../config/schema-types.generated.js';
import type { AgentsConfig, ModelProfileConfig, RetrySettings } from '../../config/types.js';
import { locate, readYamlFile, type YamlSource } from '../../config/yaml-source.js';
import { mergeMcpServers, readMcpServers } from '../../features/mcp/server-config.js';
import { mergeA2aAgents, readA2aAgents } from '../../features/a2a/a2a-config.js';

export function emptyAgentsConfig(): AgentsConfig {
  return { files: [], profiles: new Map(), agents: new Map(), trustedAgents: new Map(), mcpServers: [] };
}

/**
 * Reads one agents file into `into`, returning its diagnostics (all of them, not the first).
 * `trusted` is for the package's own agents.yaml only: its agents are the baseline that the
 * agents files of projects and recipes may tighten but not loosen.
 */
export function loadAgentsFile(file: string, into: AgentsConfig, trusted = false): Diagnostic[] {
  const { source, diagnostics } = readYamlFile(file);
  if (!source) return diagnostics;
  return [...diagnostics, ...loadAgentsSource(source, into, trusted)];
}

export function loadAgentsSource(source: YamlSource, into: AgentsConfig, trusted = false): Diagnostic[] {
  const schemaDiagnostics = validateConfig('agents', source);
  if (schemaDiagnostics.length > 0) return schemaDiagnostics;
  const diagnostics: Diagnostic[] = [];
  const data = source.data as AgentsYaml;
  into.files.push(source.file);
  for (const [name, raw] of Object.entries(data.llm ?? {})) {
    const profile: ModelProfileConfig = { ...readModelProfile(name, raw), location: locate(source, ['llm', name]), ...(trusted ? { trusted } : {}) };
    into.profiles.set(name, profile);
    diagnostics.push(...literalSecretHeaders(name, profile.headers, source));
  }
  for (const [name, raw] of Object.entries(data.agents ?? {})) {
    const agent = readAgentDefinition(name, raw, source, ['agents', name], diagnostics, trusted);
    diagnostics.push(...sandboxHostDiagnostics(agent.sandbox));
    into.agents.set(name, agent);
    if (trusted) into.trustedAgents.set(name, agent);
  }
  into.mcpServers = mergeMcpServers(into.mcpServers, readMcpServers(source, ['mcp_servers'], data.mcp_servers, trusted ? 'package' : 'project', diagnostics));
  if (data.a2a) into.a2aAgents = mergeA2aAgents(into.a2aAgents, readA2aAgents(source, ['a2a'], data.a2a, trusted ? 'package' : 'project', diagnostics));
  return diagnostics;
}

/** A model profile as written; with nothing written, the profile a run falls back to. */
export function readModelProfile(name: string, raw: ProfileYaml = {}): ModelProfileConfig {
  return {
    name,
    provider: raw.provider ?? profileDefaults.provider,
    baseUrl: raw.base_url,
    apiKeyEnv: raw.api_key_env,
    model: raw.model,
    maxTokens: raw.max_tokens,
    temperature: raw.temperature,
    contextWindow: raw.context_window,
    vision: raw.vision ?? profileDefaults.vision,
    reasoning: raw.reasoning,
    reasoningEffort: raw.reasoning_effort,
    stream: raw.stream,
    timeoutSeconds: raw.timeout_seconds ?? profileDefaults.timeout_seconds,
    streamIdleTimeoutSeconds: raw.stream_idle_timeout_seconds ?? profileDefaults.stream_idle_timeout_seconds,
    apiVersion: raw.api_version ?? profileDefaults.api_version,
    deployment: raw.deployment,
    headers: raw.headers ?? { ...profileDefaults.headers },
    headersEnv: raw.headers_env ?? { ...profileDefaults.headers_env },
    price: raw.price && {
      inputPerMillion: raw.price.input_per_million,
      outputPerMillion: raw.price.output_per_million,
      ...(raw.price.cached_input_per_million !== undefined ? { cachedInputPerMillion: raw.price.cached_input_per_million } : {}),
    },
    fallback: raw.fallback ?? [],
    fallbackCooldownSeconds: raw.fallback_cooldown_seconds ?? profileDefaults.fallback_cooldown_seconds,
    cache: raw.cache ?? profileDefaults.cache,
    retry: readRetrySettings(raw.retry),
    rateLimit: raw.rate_limit && {
      requestsPerMinute: raw.rate_limit.requests_per_minute,
      tokensPerMinute: raw.rate_limit.tokens_per_minute,
      maxConcurrent: raw.rate_limit.max_concurrent,
    },
  };
}

/** How a profile's requests are retried; with nothing written, the defaults. */
function readRetrySettings(raw: ProfileYaml['retry'] = {}): RetrySettings {
  const defaults = profileDefaults.retry;
  return {
    maxAttempts: raw.max_attempts ?? defaults.max_attempts,
    baseDelayMs: raw.base_delay_ms ?? defaults.base_delay_ms,
    maxDelayMs: raw.max_delay_ms ?? defaults.max_delay_ms,
    maxRetryAfterSeconds: raw.max_retry_after_seconds ?? defaults.max_retry_after_seconds,
  };
}
