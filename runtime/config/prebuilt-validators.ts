/**
 * The config validators that scripts/compile-schemas.mjs compiles to code at build time. Running
 * from source, they are required from dist/; the runtime's bundle carries them inline instead
 * (scripts/bundle.mjs), so they load with the rest of its code.
 */
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';

export const prebuiltValidatorsFile = 'dist/schemas/config-validators.cjs';

/** The validators by config kind (config-schemas.ts names the kinds). */
export function loadPrebuiltValidators<Kind extends string>(file: string): Record<Kind, ValidateFunction> {
  return createRequire(import.meta.url)(file) as Record<Kind, ValidateFunction>;
}
