/**
 * The schemas, the types the loaders read YAML through, and the configuration defaults must not
 * drift apart: the committed types are what the schemas generate, every default is valid where the
 * schema puts it, every `default:` a schema states is the one the runtime uses, and a key left out
 * loads as if its default had been written.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import * as defaults from '../runtime/config/defaults.js';
import { emptyAgentsConfig, loadAgentsSource } from '../runtime/runs/recipe/load-agents.js';
import { parseYamlText } from '../runtime/config/yaml-source.js';
import { configTypesFile, generateConfigTypes } from '../scripts/generate-config-types.js';

type SchemaNode = Record<string, unknown>;
type DefaultsGroup = keyof typeof defaults;

const schemaFolder = fileURLToPath(new URL('../schemas/', import.meta.url));
const schemaKinds = ['agents', 'recipe', 'user-config'] as const;
const schemas = Object.fromEntries(
  schemaKinds.map((kind) => [kind, JSON.parse(readFileSync(join(schemaFolder, `${kind}.schema.json`), 'utf8')) as SchemaNode]),
) as Record<(typeof schemaKinds)[number], SchemaNode>;

/** Where each group of defaults sits in the schemas: the mapping whose keys it gives values to. */
const groupLocations: Record<DefaultsGroup, string> = {
  agentDefaults: 'agents.schema.json#/$defs/agent',
  permissionDefaults: 'agents.schema.json#/$defs/permissions',
  profileDefaults: 'agents.schema.json#/$defs/profile',
  sandboxDefaults: 'agents.schema.json#/$defs/sandbox/anyOf/1',
  recipeDefaults: 'recipe.schema.json#',
  checkDefaults: 'recipe.schema.json#/$defs/check',
  userConfigDefaults: 'user-config.schema.json#',
  mcpServerDefaults: 'agents.schema.json#/$defs/mcp_server',
  a2aAgentDefaults: 'agents.schema.json#/$defs/a2a_agent',
};

interface DefaultValue {
  /** The schema of the key, as `file#/json/pointer`. */
  location: string;
  value: unknown;
}

function schemaAt(location: string): SchemaNode | undefined {
  const [file, pointer] = location.split('#');
  let node: unknown = schemas[file.replace('.schema.json', '') as keyof typeof schemas];
  for (const segment of pointer.split('/').slice(1)) {
    node = (node as Record<string, unknown> | undefined)?.[segment];
  }
  return node as SchemaNode | undefined;
}

/** Each default as the value of one key; a mapping the schema describes key by key is followed into. */
function defaultValues(): DefaultValue[] {
  const values: DefaultValue[] = [];
  const visit = (location: string, value: Record<string, unknown>) => {
    for (const [key, item] of Object.entries(value)) {
      const keyLocation = `${location}/properties/${key}`;
      const keySchema = schemaAt(keyLocation);
      if (keySchema?.properties && item && typeof item === 'object' && !Array.isArray(item)) visit(keyLocation, item as Record<string, unknown>);
      else values.push({ location: keyLocation, value: item });
    }
  };
  for (const [group, location] of Object.entries(groupLocations)) visit(location, defaults[group as DefaultsGroup]);
  return values;
}

/** Every `default:` keyword in the schemas, by location. */
function schemaDefaults(): Map<string, unknown> {
  const found = new Map<string, unknown>();
  // Under `properties` the keys are names, and a key may be called `default`.
  const visit = (node: unknown, location: string, keysAreNames: boolean) => {
    if (!node || typeof node !== 'object') return;
    if (!Array.isArray(node) && !keysAreNames && 'default' in node) found.set(location, (node as SchemaNode).default);
    for (const [key, child] of Object.entries(node)) {
      if (keysAreNames || key !== 'default') visit(child, `${location}/${key}`, !keysAreNames && key === 'properties');
    }
  };
  for (const kind of schemaKinds) visit(schemas[kind], `${kind}.schema.json#`, false);
  return found;
}

describe('the generated configuration types', () => {
  it('are what the schemas generate (npm run generate:config-types)', async () => {
    expect(await generateConfigTypes()).toBe(readFileSync(configTypesFile, 'utf8'));
  });
});

describe('the configuration defaults', () => {
  const ajv = new Ajv({ strict: false });
  for (const kind of schemaKinds) ajv.addSchema(schemas[kind]);

  it('every group of defaults has its place in the schemas', () => {
    expect(Object.keys(defaults).sort()).toEqual(Object.keys(groupLocations).sort());
  });

  it('each default is a key its schema declares, with a value the schema accepts', () => {
    const problems = defaultValues().flatMap(({ location, value }) => {
      if (!schemaAt(location)) return [`${location}: the schema has no such key`];
      const validate = ajv.getSchema(location);
      if (!validate) return [`${location}: the schema cannot be compiled`];
      return validate(value) ? [] : [`${location}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`];
    });
    expect(problems).toEqual([]);
  });

  it('each default a schema states is the one in the defaults module', () => {
    const module = new Map(defaultValues().map(({ location, value }) => [location, value]));
    const stated = [...schemaDefaults()];
    expect(stated.length).toBeGreaterThan(0);
    for (const [location, value] of stated) {
      expect(module.has(location), `${location} states a default that the defaults module does not have`).toBe(true);
      expect(module.get(location), location).toEqual(value);
    }
  });

  it('a default that a description names is the one in the defaults module', () => {
    const mentions = defaultValues().flatMap(({ location, value }) => {
      const description = schemaAt(location)?.description;
      const named = typeof description === 'string' ? /\bdefaults?(?: to|:)? `?([^\s`),;]+)/i.exec(description)?.[1] : undefined;
      return named === undefined ? [] : [{ location, named: named.replace(/\.$/, ''), value: String(value) }];
    });
    expect(mentions.length).toBeGreaterThan(0);
    for (const { location, named, value } of mentions) expect(named, location).toBe(value);
  });

  it('an agent and a model profile that leave every key out load as if each default were written', () => {
    const agent = { ...defaults.agentDefaults, permissions: defaults.permissionDefaults };
    // JSON is YAML: the defaults written out as flow mappings.
    const written = `version: 1\nllm:\n  default: ${JSON.stringify(defaults.profileDefaults)}\nagents:\n  assistant: ${JSON.stringify(agent)}\n`;
    expect(loadedDefinitions('version: 1\nllm:\n  default: {}\nagents:\n  assistant: {}\n')).toEqual(loadedDefinitions(written));
  });
});

/** The agent and the profile an agents file defines, without where their keys were written. */
function loadedDefinitions(text: string): { agent: object; profile: object } {
  const { source } = parseYamlText('agents.yaml', text);
  const config = emptyAgentsConfig();
  expect(loadAgentsSource(source!, config)).toEqual([]);
  const { location: _agentLocation, toolLocations: _toolLocations, settingLocations: _settingLocations, ...agent } = config.agents.get('assistant')!;
  const { location: _profileLocation, ...profile } = config.profiles.get('default')!;
  return { agent, profile };
}
