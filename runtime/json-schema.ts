/**
 * The one ajv instance for schemas that arrive at run time (tool parameters, response formats).
 * Created on first use; meta-schema checks are skipped on the hot path and done explicitly by
 * `checkJsonSchema` where a broken schema must be reported (validate, plugin loading).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { JsonSchema } from './tool.js';

let instance: Ajv | undefined;

function ajv(): Ajv {
  instance ??= new Ajv({ allErrors: true, strict: false, useDefaults: true, validateSchema: false });
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
