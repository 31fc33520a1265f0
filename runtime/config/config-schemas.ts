/**
 * Validates parsed YAML against the shipped JSON Schemas and turns ajv's errors into diagnostics
 * with file:line:column, unknown-key hints and one message per problem.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { Diagnostic } from '../contract/errors.js';
import { packageRoot } from './package-root.js';
import { didYouMean } from '../contract/did-you-mean.js';
import { loadPrebuiltValidators, prebuiltValidatorsFile } from './prebuilt-validators.js';
import { locate, locateKey, pathFromPointer, type YamlSource } from './yaml-source.js';

export const configKinds = ['agents', 'recipe', 'user-config', 'eval'] as const;

export type ConfigKind = (typeof configKinds)[number];

let validators: Record<ConfigKind, ValidateFunction> | undefined;

function compiledValidators(): Record<ConfigKind, ValidateFunction> {
  validators ??= prebuiltValidators() ?? compileValidators();
  return validators;
}

/** The build compiles the schemas to code ahead of time; use that unless a schema changed since. */
function prebuiltValidators(): Record<ConfigKind, ValidateFunction> | undefined {
  const prebuilt = join(packageRoot, prebuiltValidatorsFile);
  if (!existsSync(prebuilt)) return undefined;
  const builtAt = statSync(prebuilt).mtimeMs;
  const stale = configKinds.some((kind) => statSync(schemaFile(kind)).mtimeMs > builtAt);
  return stale ? undefined : loadPrebuiltValidators<ConfigKind>(prebuilt);
}

function schemaFile(kind: ConfigKind): string {
  return join(packageRoot, 'schemas', `${kind}.schema.json`);
}

function compileValidators(): Record<ConfigKind, ValidateFunction> {
  // Required here, not imported: a run with current prebuilt validators never loads ajv at start-up.
  const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as { Ajv: typeof Ajv };
  const ajv = new AjvClass({ allErrors: true, verbose: true, strict: false });
  for (const kind of configKinds) ajv.addSchema(JSON.parse(readFileSync(schemaFile(kind), 'utf8')));
  return Object.fromEntries(configKinds.map((kind) => [kind, ajv.getSchema(`${kind}.schema.json`)!])) as Record<ConfigKind, ValidateFunction>;
}

export function validateConfig(kind: ConfigKind, source: YamlSource): Diagnostic[] {
  const validate = compiledValidators()[kind];
  if (validate(source.data)) return [];
  return diagnosticsFromErrors(source, validate.errors ?? []);
}

function diagnosticsFromErrors(source: YamlSource, errors: ErrorObject[]): Diagnostic[] {
  const relevant = dropInapplicableBranches(source, errors);
  const seen = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  for (const error of relevant) {
    const diagnostic = describe(source, error);
    const key = `${diagnostic.location?.line}:${diagnostic.location?.column}:${diagnostic.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    diagnostics.push(diagnostic);
  }
  return diagnostics;
}

/**
 * For `anyOf` alternatives (a prompt is a string or `{file}`), ajv reports every branch's
 * failure. Keep the errors of the branch whose type matches the value; when none matches, keep
 * only the summary.
 */
function dropInapplicableBranches(source: YamlSource, errors: ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  errors.forEach((alternative, index) => {
    if (alternative.keyword !== 'anyOf') return;
    const branches = (alternative.schema as Array<Record<string, unknown>>) ?? [];
    const value = valueAt(source.data, pathFromPointer(alternative.instancePath));
    const matching = branches.findIndex((branch) => branchAccepts(branch, value));
    for (const error of branchErrors(errors, index)) {
      if (branchOf(error, alternative, branches) !== matching) dropped.add(error);
    }
    if (matching >= 0) dropped.add(alternative);
  });
  return errors.filter((error) => !dropped.has(error));
}

/** ajv lists a failed `anyOf`'s branch errors right before it, all at or below its value. */
function branchErrors(errors: ErrorObject[], anyOfIndex: number): ErrorObject[] {
  const { instancePath } = errors[anyOfIndex];
  const inside: ErrorObject[] = [];
  for (let index = anyOfIndex - 1; index >= 0; index -= 1) {
    const error = errors[index];
    if (error.instancePath !== instancePath && !error.instancePath.startsWith(`${instancePath}/`)) break;
    inside.push(error);
  }
  return inside;
}

function branchOf(error: ErrorObject, alternative: ErrorObject, branches: Array<Record<string, unknown>>): number {
  const prefix = `${alternative.schemaPath}/`;
  if (error.schemaPath.startsWith(prefix)) return Number(error.schemaPath.slice(prefix.length).split('/')[0]);
  // Errors inside a referenced schema carry that schema's path, not the branch's.
  return branches.findIndex((branch) => typeof branch.$ref === 'string');
}

function branchAccepts(branch: Record<string, unknown>, value: unknown): boolean {
  const type = valueType(value);
  if (Array.isArray(branch.enum)) return branch.enum.some((allowed) => typeof allowed === typeof value);
  if (typeof branch.type === 'string') return branch.type === type || (branch.type === 'number' && type === 'integer');
  if (typeof branch.$ref === 'string') return type === 'object';
  return false;
}

function valueType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function valueAt(data: unknown, path: string[]): unknown {
  let current = data;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function describe(source: YamlSource, error: ErrorObject): Diagnostic {
  const path = pathFromPointer(error.instancePath);
  const name = path.length > 0 ? `'${path.join('.')}'` : 'the document';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperty':
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const known = Object.keys((error.parentSchema as { properties?: object })?.properties ?? {});
      const where = path.length > 0 ? ` in ${name}` : '';
      const hint = key === 'api_key' && known.includes('api_key_env')
        ? ': a key does not belong in YAML; put it in an environment variable and name that variable with api_key_env'
        : known.length > 0 ? didYouMean(key, known) : '';
      return diagnostic(`unknown key '${key}'${where}${hint}`, locateKey(source, path, key));
    }
    case 'required':
      return diagnostic(`${name} is missing the required key '${String(params.missingProperty)}'`, locate(source, path));
    case 'type':
      return diagnostic(`${name} must be ${article(String(params.type))}, not ${article(valueType(valueAt(source.data, path)))}`, locate(source, path));
    case 'enum': {
      const allowed = params.allowedValues as unknown[];
      const value = valueAt(source.data, path);
      const hint = typeof value === 'string' ? didYouMean(value, allowed.map(String)) : '';
      return diagnostic(`${name} must be one of: ${allowed.join(', ')}${hint}`, locate(source, path));
    }
    case 'minLength':
      return diagnostic(params.limit === 1 ? `${name} must not be empty` : `${name} must be at least ${String(params.limit)} characters long`, locate(source, path));
    case 'const':
      return diagnostic(`${name} must be ${JSON.stringify(params.allowedValue)}`, locate(source, path));
    case 'anyOf':
      return diagnostic(`${name} has the wrong form: ${describeAlternatives(error.schema as Array<Record<string, unknown>>)}`, locate(source, path));
    default:
      return diagnostic(`${name} ${error.message ?? 'is invalid'}`, locate(source, path));
  }

  function diagnostic(message: string, location: Diagnostic['location']): Diagnostic {
    return { severity: 'error', message, location };
  }
}

function describeAlternatives(branches: Array<Record<string, unknown>>): string {
  const forms = branches.map((branch) => {
    if (Array.isArray(branch.enum)) return `one of ${branch.enum.join(', ')}`;
    if (branch.type === 'object' || typeof branch.$ref === 'string') return 'a mapping';
    return article(String(branch.type));
  });
  return `expected ${forms.join(' or ')}`;
}

function article(type: string): string {
  const names: Record<string, string> = {
    object: 'a mapping',
    array: 'a list',
    string: 'a string',
    integer: 'a whole number',
    number: 'a number',
    boolean: 'true or false',
    null: 'empty',
    undefined: 'missing',
  };
  return names[type] ?? type;
}
