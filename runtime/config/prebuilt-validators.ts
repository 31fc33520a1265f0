/**
 * The config validators that scripts/compile-schemas.mjs compiles to code at build time. Running
 * from source, they are required from dist/; the runtime's bundle carries them inline instead
 * (scripts/bundle.mjs), so they load with the rest of its code.
 */
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import type { ConfigKind } from './config-schemas.js';

export const prebuiltValidatorsFile = 'dist/schemas/config-validators.cjs';

export function loadPrebuiltValidators(file: string): Record<ConfigKind, ValidateFunction> {
  return createRequire(import.meta.url)(file) as Record<ConfigKind, ValidateFunction>;
}
