/** Loads agents.yaml files: model profiles and named agents, later files overriding earlier ones. */
import type { Diagnostic } from '../errors.js';
import { readAgentDefinition } from './agent-definition.js';
import { validateConfig } from './config-schemas.js';
import { literalSecretHeaders } from './literal-secrets.js';
import type { AgentsConfig, ModelProfileConfig } from './types.js';
import { locate, readYamlFile, type YamlSource } from './yaml-source.js';

export const defaultRetrySettings = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterSeconds: 60,
};

export function emptyAgentsConfig(): AgentsConfig {
  return { files: [], profiles: new Map(), agents: new Map(), trustedAgents: new Map() };
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
  const data = source.data as { llm?: Record<string, Record<string, unknown>>; agents?: Record<string, Record<string, unknown>> };
  into.files.push(source.file);
  for (const [name, raw] of Object.entries(data.llm ?? {})) {
    const profile = readProfile(name, raw, source, trusted);
    into.profiles.set(name, profile);
    diagnostics.push(...literalSecretHeaders(name, profile.headers, source));
  }
  for (const [name, raw] of Object.entries(data.agents ?? {})) {
    const agent = readAgentDefinition(name, raw, source, ['agents', name], diagnostics, trusted);
    into.agents.set(name, agent);
    if (trusted) into.trustedAgents.set(name, agent);
  }
  return diagnostics;
}

function readPrice(raw: Record<string, number> | undefined): ModelProfileConfig['price'] {
  return raw ? { inputPerMillion: raw.input_per_million, outputPerMillion: raw.output_per_million } : undefined;
}

function readProfile(name: string, raw: Record<string, unknown>, source: YamlSource, trusted: boolean): ModelProfileConfig {
  const retry = (raw.retry ?? {}) as Record<string, number | undefined>;
  return {
    name,
    provider: (raw.provider as ModelProfileConfig['provider'] | undefined) ?? 'openai-compatible',
    baseUrl: raw.base_url as string | undefined,
    apiKeyEnv: raw.api_key_env as string | undefined,
    model: raw.model as string | undefined,
    maxTokens: raw.max_tokens as number | undefined,
    temperature: raw.temperature as number | undefined,
    contextWindow: raw.context_window as number | undefined,
    vision: raw.vision === true,
    reasoning: raw.reasoning as boolean | undefined,
    reasoningEffort: raw.reasoning_effort as ModelProfileConfig['reasoningEffort'],
    stream: raw.stream as boolean | undefined,
    timeoutSeconds: (raw.timeout_seconds as number | undefined) ?? 120,
    streamIdleTimeoutSeconds: raw.stream_idle_timeout_seconds as number | undefined,
    apiVersion: raw.api_version as string | undefined,
    deployment: raw.deployment as string | undefined,
    headers: (raw.headers as Record<string, string> | undefined) ?? {},
    headersEnv: (raw.headers_env as Record<string, string> | undefined) ?? {},
    price: readPrice(raw.price as Record<string, number> | undefined),
    retry: {
      maxAttempts: retry.max_attempts ?? defaultRetrySettings.maxAttempts,
      baseDelayMs: retry.base_delay_ms ?? defaultRetrySettings.baseDelayMs,
      maxDelayMs: retry.max_delay_ms ?? defaultRetrySettings.maxDelayMs,
      maxRetryAfterSeconds: retry.max_retry_after_seconds ?? defaultRetrySettings.maxRetryAfterSeconds,
    },
    location: locate(source, ['llm', name]),
    ...(trusted ? { trusted } : {}),
  };
}
