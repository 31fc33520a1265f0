// Compiles the config schemas into standalone validator code at build time, so a run validates
// YAML without building an ajv instance (the largest part of start-up otherwise).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ajv = new Ajv({ allErrors: true, verbose: true, strict: false, code: { source: true } });
const kinds = ['agents', 'recipe', 'user-config', 'eval'];
for (const kind of kinds) ajv.addSchema(JSON.parse(readFileSync(join(root, 'schemas', `${kind}.schema.json`), 'utf8')));
const code = standaloneCode.default(ajv, Object.fromEntries(kinds.map((kind) => [kind, `${kind}.schema.json`])));
const target = join(root, 'dist', 'schemas', 'config-validators.cjs');
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, code);
