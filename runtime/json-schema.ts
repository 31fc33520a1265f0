/**
 * The one ajv instance for schemas that arrive at run time (tool parameters, response formats).
 * Created on first use; meta-schema checks are skipped on the hot path and done explicitly by
 * `checkJsonSchema` where a broken schema must be reported (validate, plugin loading).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { JsonSchema } from './tool.js';

// ajv-formats is a CommonJS module whose default export arrives wrapped under ESM interop.
const addFormats = ((addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ?? addFormatsPlugin) as unknown as (ajv: Ajv) => Ajv;

let instance: Ajv | undefined;

function ajv(): Ajv {
  if (!instance) {
    instance = new Ajv({ allErrors: true, strict: false, useDefaults: true, validateSchema: false });
    // Response schemas use formats such as "uri" and "date"; without this they would pass unchecked.
    addFormats(instance);
  }
  return instance;
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
