/**
 * Turns a model profile plus the environment into an endpoint, a key and a model id. Explicit
 * profile values win; the conventional variables fill the gaps; a local Ollama is found when
 * nothing at all is configured.
 */
import { ProviderError } from '../../contract/errors.js';
import type { ModelProfileConfig } from '../../config/types.js';

export interface ModelConnection {
  profile: ModelProfileConfig;
  provider: ModelProfileConfig['provider'];
  baseUrl: string;
  apiKey: string;
  /** The variable the key came from, for error messages; never the key itself. */
  apiKeyEnv?: string;
  model: string;
  reasoning: boolean;
  /** The profile's headers with those from headers_env filled in from the environment. */
  headers: Record<string, string>;
}

type Environment = Record<string, string | undefined>;

const openAiBaseUrl = 'https://api.openai.com/v1';
const defaultOpenAiModel = 'gpt-4o-mini';
const placeholderKey = 'not-needed';

export function defaultApiKeyEnv(profile: ModelProfileConfig): string {
  if (profile.apiKeyEnv) return profile.apiKeyEnv;
  return profile.provider === 'azure' ? 'AZURE_OPENAI_API_KEY' : 'OPENAI_API_KEY';
}

/** Variables a profile names explicitly but that are not set: reported together before the run. */
export function missingEnvironment(profile: ModelProfileConfig, environment: Environment): string[] {
  const missing: string[] = [];
  if (profile.apiKeyEnv && !environment[profile.apiKeyEnv]) missing.push(profile.apiKeyEnv);
  if (profile.provider === 'azure') {
    if (!profile.apiKeyEnv && !environment.AZURE_OPENAI_API_KEY) missing.push('AZURE_OPENAI_API_KEY');
    if (!profile.baseUrl && !environment.AZURE_OPENAI_ENDPOINT) missing.push('AZURE_OPENAI_ENDPOINT');
  }
  if (profile.provider === 'openai' && !profile.apiKeyEnv && !environment.OPENAI_API_KEY) missing.push('OPENAI_API_KEY');
  for (const variable of Object.values(profile.headersEnv ?? {})) {
    if (!environment[variable] && !missing.includes(variable)) missing.push(variable);
  }
  return missing;
}

/** Headers to send: the literal ones, and those whose values headers_env names, which win over a literal one of the same name. */
function requestHeaders(profile: ModelProfileConfig, environment: Environment): Record<string, string> {
  const fromEnvironment = Object.entries(profile.headersEnv ?? {}).map(([name, variable]) => [name, environment[variable] ?? ''] as const);
  const replaced = new Set(fromEnvironment.map(([name]) => name.toLowerCase()));
  const literal = Object.entries(profile.headers).filter(([name]) => !replaced.has(name.toLowerCase()));
  return Object.fromEntries([...literal, ...fromEnvironment]);
}

export async function resolveModelConnection(
  profile: ModelProfileConfig,
  environment: Environment,
  options: { modelOverride?: string; discover?: (baseUrl: string) => Promise<string[] | undefined> } = {},
): Promise<ModelConnection> {
  const discover = options.discover ?? listModels;
  const apiKeyEnv = defaultApiKeyEnv(profile);
  const explicitModel = options.modelOverride ?? environment.MANUS_MODEL ?? profile.model;
  const connect = (baseUrl: string, apiKey: string, model: string): ModelConnection => ({
    profile,
    provider: profile.provider,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKey,
    apiKeyEnv: environment[apiKeyEnv] ? apiKeyEnv : undefined,
    model,
    reasoning: profile.reasoning ?? isReasoningModel(model),
    headers: requestHeaders(profile, environment),
  });

  switch (profile.provider) {
    case 'azure': {
      const endpoint = profile.baseUrl ?? environment.AZURE_OPENAI_ENDPOINT ?? '';
      return connect(endpoint, environment[apiKeyEnv] ?? '', explicitModel ?? profile.deployment ?? '');
    }
    case 'openai':
      return connect(profile.baseUrl ?? environment.OPENAI_BASE_URL ?? openAiBaseUrl, environment[apiKeyEnv] ?? '', explicitModel ?? defaultOpenAiModel);
    case 'ollama': {
      const baseUrl = profile.baseUrl ?? ollamaBaseUrl(environment);
      return connect(baseUrl, environment[apiKeyEnv] ?? placeholderKey, explicitModel ?? (await firstModel(baseUrl, discover)));
    }
    case 'openai-compatible': {
      const baseUrl = profile.baseUrl ?? environment.OPENAI_BASE_URL;
      const apiKey = environment[apiKeyEnv];
      if (baseUrl) return connect(baseUrl, apiKey ?? placeholderKey, explicitModel ?? (await firstModel(baseUrl, discover)));
      if (apiKey) return connect(openAiBaseUrl, apiKey, explicitModel ?? defaultOpenAiModel);
      const ollama = ollamaBaseUrl(environment);
      const models = await discover(ollama);
      if (models) return connect(ollama, placeholderKey, explicitModel ?? models[0] ?? notConfigured(`Ollama at ${ollama} has no models; pull one or set MANUS_MODEL.`));
      return notConfigured();
    }
  }
}

function notConfigured(extra?: string): never {
  throw new ProviderError(
    'not_configured',
    extra ??
      'No model is configured. Set OPENAI_API_KEY (and optionally MANUS_MODEL) to use OpenAI; or OPENAI_BASE_URL and MANUS_MODEL ' +
        'for any OpenAI-compatible endpoint (vLLM, LM Studio, OpenRouter, ...); or start Ollama on 127.0.0.1:11434; ' +
        'or declare a profile under `llm:` in agents.yaml.',
  );
}

async function firstModel(baseUrl: string, discover: (baseUrl: string) => Promise<string[] | undefined>): Promise<string> {
  const models = await discover(baseUrl);
  if (models?.[0]) return models[0];
  throw new ProviderError('not_configured', `No model id is set and ${baseUrl}/models lists none. Set MANUS_MODEL or the profile's model.`);
}

function ollamaBaseUrl(environment: Environment): string {
  const host = environment.OLLAMA_HOST;
  if (!host) return 'http://127.0.0.1:11434/v1';
  const withScheme = /^https?:\/\//.test(host) ? host : `http://${host}`;
  return `${withScheme.replace(/\/+$/, '')}/v1`;
}

/** GET {baseUrl}/models with a short timeout; undefined when nothing answers. */
async function listModels(baseUrl: string): Promise<string[] | undefined> {
  try {
    const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, { signal: AbortSignal.timeout(800) });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { data?: Array<{ id?: string }> };
    return (body.data ?? []).map((entry) => entry.id).filter((id): id is string => typeof id === 'string');
  } catch {
    return undefined;
  }
}

export function isReasoningModel(model: string): boolean {
  return /^(o\d|gpt-5)/i.test(model.split('/').pop() ?? model);
}
