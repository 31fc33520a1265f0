/**
 * Writes the TypeScript types of the YAML documents (agents files, recipes, the user's config)
 * from their JSON Schemas, so the loaders read what the schemas allow and nothing else.
 * Run: npm run generate:config-types. test/config-schema-agreement.test.ts fails when the
 * committed file differs from what this produces.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile, type JSONSchema } from 'json-schema-to-typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const schemaFolder = join(root, 'schemas');
export const configTypesFile = join(root, 'runtime', 'config', 'schema-types.generated.ts');

/** Each document's type, and each shared definition's, is named for what it is in YAML. */
const documentNames: Record<string, string> = { agents: 'AgentsYaml', recipe: 'RecipeYaml', 'user-config': 'UserConfigYaml', eval: 'EvalYaml' };

const header = [
  '/*',
  ' * Generated from the JSON Schemas in schemas/ by scripts/generate-config-types.ts: do not edit.',
  ' * Regenerate with `npm run generate:config-types` after changing a schema.',
  ' */',
].join('\n');

export async function generateConfigTypes(): Promise<string> {
  const names = new WeakMap<object, string>();
  // Schemas are read here rather than by the generator, so that their definitions keep their names.
  const readSchema = (file: { url: string }): JSONSchema => {
    const kind = /([\w-]+)\.schema\.json$/.exec(file.url)![1];
    const schema = JSON.parse(readFileSync(join(schemaFolder, `${kind}.schema.json`), 'utf8')) as JSONSchema & { $defs?: Record<string, JSONSchema> };
    names.set(schema, documentNames[kind]);
    for (const [key, definition] of Object.entries(schema.$defs ?? {})) names.set(definition, `${pascalCase(key)}Yaml`);
    return schema;
  };
  const documents: JSONSchema = {
    title: 'ConfigYaml',
    description: 'Any of the YAML documents the runtime reads.',
    anyOf: Object.keys(documentNames).map((kind) => ({ $ref: `${kind}.schema.json` })),
  };
  return compile(documents, 'ConfigYaml', {
    cwd: schemaFolder,
    bannerComment: header,
    // A definition used with keys beside its $ref is a copy, which the generator names by its path.
    customName: (schema) => names.get(schema) ?? (schema.$id && !schema.title ? `${pascalCase(schema.$id)}Yaml` : undefined),
    // A list that must not be empty still reads as a list, not as a tuple type.
    ignoreMinAndMaxItems: true,
    style: { singleQuote: true, printWidth: 120 },
    $refOptions: { resolve: { schemas: { order: 1, canRead: /\.schema\.json$/, read: readSchema } } },
  });
}

function pascalCase(key: string): string {
  return key.replace(/(?:^|[_-])(\w)/g, (_match, letter: string) => letter.toUpperCase());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeFileSync(configTypesFile, await generateConfigTypes());
