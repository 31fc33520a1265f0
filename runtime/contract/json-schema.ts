/**
 * The one ajv instance for schemas that arrive at run time (tool parameters, response formats).
 * ajv is loaded only when a run first needs it — config files are checked by validators compiled
 * at build time — so start-up does not pay for it. The loop awaits `prepareJsonSchemas()`; other
 * callers may use the synchronous functions, which load ajv on the spot if needed. Meta-schema
 * checks are skipped on the hot path and done explicitly by `checkJsonSchema`.
 */
import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import type { JsonSchema } from './tool.js';

/** A CommonJS module as `import()` or `require` hands it over: its exports may sit under `default`. */
type LoadedModule = Record<string, unknown> & { default?: unknown };

let instance: Ajv | undefined;
let preparing: Promise<void> | undefined;

/** Loads ajv without blocking; call before the synchronous functions on a hot path. */
export function prepareJsonSchemas(): Promise<void> {
  preparing ??= Promise.all([import('ajv'), import('ajv-formats')]).then(([ajvModule, formats]) => {
    instance ??= createInstance(ajvModule as LoadedModule, formats as LoadedModule);
  });
  return preparing;
}

function ajv(): Ajv {
  if (!instance) {
    const load = createRequire(import.meta.url);
    instance = createInstance(load('ajv') as LoadedModule, load('ajv-formats') as LoadedModule);
  }
  return instance;
}

function createInstance(ajvModule: LoadedModule, formats: LoadedModule): Ajv {
  const AjvClass = (ajvModule.Ajv ?? (ajvModule.default as LoadedModule | undefined)?.Ajv ?? ajvModule.default) as typeof Ajv;
  const created = new AjvClass({ allErrors: true, strict: false, useDefaults: true, validateSchema: false });
  const addFormats = (formats.default ?? formats) as (ajv: Ajv) => Ajv;
  // Response schemas use formats such as "uri" and "date"; without this they would pass unchecked.
  addFormats(created);
  return created;
}

const compiled = new WeakMap<object, ValidateFunction>();

export function compileJsonSchema(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv().compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Problems with the schema itself, checked against the JSON Schema meta-schema. */
export function checkJsonSchema(schema: JsonSchema): string | undefined {
  if (!ajv().validateSchema(schema)) return ajv().errorsText(ajv().errors);
  try {
    compileJsonSchema(schema);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
