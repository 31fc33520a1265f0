/**
 * OpenManus's `[llm]` sections as model profiles. `[llm]` is the default profile; each
 * `[llm.<name>]` overrides it for one use, as OpenManus merges it over `[llm]`, and `[llm.vision]`
 * is the profile that sees images. API keys become variables: the YAML names them, never holds them.
 */
import type { ProfileYaml } from '../../config/schema-types.generated.js';
import { isTable, type OpenManusSource, type TomlTable } from './openmanus-files.js';
import { settingName, variableName, type ImportReport } from './import-findings.js';

export interface ImportedProfiles {
  profiles: Record<string, ProfileYaml>;
  /** A comment written above a profile in the YAML, by profile name. */
  comments: Record<string, string>;
}

const profileKeys = ['model', 'base_url', 'api_key', 'api_type', 'api_version', 'max_tokens', 'temperature', 'max_input_tokens'];

export const bedrockAdvice =
  'OpenManus reached it through AWS Bedrock with boto3, and Bedrock has no provider here. Set base_url to an ' +
  'OpenAI-compatible Bedrock endpoint (Bedrock\'s own OpenAI Chat Completions endpoint, ' +
  'https://bedrock-runtime.<region>.amazonaws.com/openai/v1, or a gateway such as LiteLLM or Bedrock Access Gateway) ' +
  'and api_key_env to the variable holding its key; until then the profile uses OPENAI_BASE_URL';

export function importModelProfiles(source: OpenManusSource, report: ImportReport): ImportedProfiles {
  const llm = source.data.llm;
  const result: ImportedProfiles = { profiles: {}, comments: {} };
  if (llm === undefined) {
    report.note('[llm]', 'there is no [llm] section; the runtime\'s default profile (OPENAI_API_KEY, OPENAI_BASE_URL, MANUS_MODEL, or a local Ollama) stays', source.locate(['llm']));
    return result;
  }
  if (!isTable(llm)) {
    report.notMapped('llm', 'must be a table ([llm])', source.locate([], 'llm'));
    return result;
  }
  const base = Object.fromEntries(Object.entries(llm).filter(([, value]) => !isTable(value)));
  const named = Object.entries(llm).filter((entry): entry is [string, TomlTable] => isTable(entry[1]));
  const defaultOverride = named.find(([name]) => name === 'default')?.[1] ?? {};
  const defaults = { ...base, ...defaultOverride };
  const defaultKey = typeof defaults.api_key === 'string' ? defaults.api_key : undefined;

  result.profiles.default = importProfile(source, report, result, { name: 'default', section: ['llm'], written: defaults, defaultKey });
  for (const [name, override] of named) {
    if (name === 'default') continue;
    const profileName = name.replace(/[^A-Za-z0-9_-]+/g, '_');
    const profile = importProfile(source, report, result, { name: profileName, section: ['llm', name], written: override, inherited: defaults, defaultKey });
    if (name === 'vision') profile.vision = true;
    result.profiles[profileName] = profile;
  }
  return result;
}

interface ProfileInput {
  name: string;
  section: string[];
  /** The keys written in this section. */
  written: TomlTable;
  /** The `[llm]` keys a named section inherits. */
  inherited?: TomlTable;
  defaultKey?: string;
}

function importProfile(source: OpenManusSource, report: ImportReport, result: ImportedProfiles, input: ProfileInput): ProfileYaml {
  const { section, written } = input;
  const settings = { ...input.inherited, ...written };
  const at = (key: string) => source.locate(written[key] === undefined ? ['llm'] : section, key);
  const name = (key: string) => settingName(written[key] === undefined ? ['llm'] : section, key);
  for (const key of Object.keys(written)) {
    if (!profileKeys.includes(key)) report.notMapped(settingName(section, key), 'not an [llm] setting this import knows', source.locate(section, key));
  }
  const text = (key: string): string | undefined => {
    const value = settings[key];
    if (value === undefined) return undefined;
    if (typeof value === 'string') return value;
    report.notMapped(name(key), 'must be a string', at(key));
    return undefined;
  };
  const profile: ProfileYaml = {};
  const apiType = (text('api_type') ?? '').trim().toLowerCase();
  const model = text('model');
  const baseUrl = text('base_url')?.trim();

  switch (apiType) {
    case 'azure': {
      profile.provider = 'azure';
      // OpenManus writes the deployment into the URL; the Azure client wants the resource endpoint and the deployment apart.
      const deployment = baseUrl ? /^(.*?)\/openai\/deployments\/([^/?#]+)/.exec(baseUrl) : null;
      if (deployment) {
        profile.base_url = deployment[1];
        profile.deployment = decodeURIComponent(deployment[2]!);
      } else if (baseUrl) profile.base_url = baseUrl;
      const apiVersion = text('api_version');
      if (apiVersion) profile.api_version = apiVersion;
      else report.note(name('api_version'), 'no api_version for Azure; the runtime\'s default Azure API version is used', at('api_type'));
      break;
    }
    case 'aws':
      profile.provider = 'openai-compatible';
      result.comments[input.name] = `${bedrockAdvice}.`;
      report.note(name('api_type'), `api_type = "aws": ${bedrockAdvice} (llm.${input.name} in the written file)`, at('api_type'));
      if (settings.base_url !== undefined) report.notMapped(name('base_url'), 'a Bedrock region host for boto3, not an OpenAI-compatible endpoint', at('base_url'));
      break;
    case 'ollama':
      profile.provider = 'ollama';
      if (baseUrl) profile.base_url = baseUrl;
      break;
    case 'openai':
      profile.provider = 'openai';
      if (baseUrl) profile.base_url = baseUrl;
      break;
    default:
      // Empty for any OpenAI-compatible endpoint; ppio and jiekou are hosted OpenAI-compatible ones.
      if (!['', 'ppio', 'jiekou'].includes(apiType)) {
        report.note(name('api_type'), `api_type = "${apiType}" is not one OpenManus documents; the profile treats it as an OpenAI-compatible endpoint`, at('api_type'));
      }
      profile.provider = 'openai-compatible';
      if (baseUrl) profile.base_url = baseUrl;
  }
  if (model) profile.model = model;
  if (apiType !== 'azure' && settings.api_version !== undefined) {
    report.notMapped(name('api_version'), 'used by OpenManus only with api_type = "azure"', at('api_version'));
  }

  const key = text('api_key');
  if (apiType === 'aws') {
    if (key !== undefined) report.notMapped(name('api_key'), 'OpenManus requires it for Bedrock but does not use it; boto3 reads the AWS credentials', at('api_key'));
  } else if (key !== undefined && key.trim() !== '') {
    const shared = key === input.defaultKey;
    profile.api_key_env = shared ? variableName('openmanus', 'llm', 'api_key') : variableName('openmanus', 'llm', input.name, 'api_key');
    const hint = apiType === 'ollama' ? 'Ollama needs no key: any value will do' : undefined;
    report.variable(profile.api_key_env, name('api_key'), hint);
  }

  const maxTokens = settings.max_tokens;
  if (maxTokens !== undefined) {
    if (Number.isInteger(maxTokens) && (maxTokens as number) >= 1) profile.max_tokens = maxTokens as number;
    else report.notMapped(name('max_tokens'), 'must be a whole number of at least 1', at('max_tokens'));
  }
  const temperature = settings.temperature;
  if (temperature !== undefined) {
    if (typeof temperature === 'number' && temperature >= 0 && temperature <= 2) profile.temperature = temperature;
    else report.notMapped(name('temperature'), 'must be a number from 0 to 2', at('temperature'));
  }
  const maxInputTokens = settings.max_input_tokens;
  if (maxInputTokens !== undefined) {
    if (Number.isInteger(maxInputTokens) && (maxInputTokens as number) >= 256) profile.context_window = maxInputTokens as number;
    else report.notMapped(name('max_input_tokens'), 'must be a whole number of at least 256 (it becomes context_window)', at('max_input_tokens'));
  }
  return profile;
}
