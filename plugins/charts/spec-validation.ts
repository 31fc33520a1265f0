/**
 * Checks a specification against the JSON Schema the vega-lite package ships, and says what is
 * wrong in a few lines a model can act on (the schema's unions make raw validator output long).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { ToolError } from 'manus-runtime';
import type { ErrorObject, ValidateFunction } from 'ajv';

const maximumReportedProblems = 6;

/** Kinds of top-level specification, by the property that marks each; a unit spec has none. */
const specificationKinds: Array<[string, string]> = [
  ['layer', 'TopLevelLayerSpec'],
  ['facet', 'TopLevelFacetSpec'],
  ['repeat', 'TopLevelRepeatSpec'],
  ['concat', 'TopLevelConcatSpec'],
  ['vconcat', 'TopLevelVConcatSpec'],
  ['hconcat', 'TopLevelHConcatSpec'],
];

let validators: Promise<Map<string, ValidateFunction>> | undefined;

export async function checkSpecification(specification: Record<string, unknown>): Promise<void> {
  validators ??= compileValidators();
  const byKind = await validators;
  const validate = byKind.get('TopLevelSpec') as ValidateFunction;
  if (validate(specification)) return;
  // Checked again as the kind it looks like, so the errors are not those of every other kind.
  const kind = specificationKinds.find(([property]) => property in specification)?.[1] ?? 'TopLevelUnitSpec';
  const intended = byKind.get(kind) as ValidateFunction;
  const errors = intended(specification) ? validate.errors : intended.errors;
  const problems = describeProblems(errors ?? []);
  throw new ToolError(
    `The Vega-Lite specification does not match the Vega-Lite schema:\n${problems.map((problem) => `- ${problem}`).join('\n')}`,
    'invalid_specification',
  );
}

async function compileValidators(): Promise<Map<string, ValidateFunction>> {
  const schemaFile = createRequire(import.meta.url).resolve('vega-lite/vega-lite-schema.json');
  const schema = JSON.parse(await readFile(schemaFile, 'utf8')) as Record<string, unknown>;
  const { Ajv } = await import('ajv');
  // The schema uses keywords and formats of its own; they describe, they do not constrain.
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, allowUnionTypes: true });
  ajv.addSchema(schema, 'vega-lite');
  const names = ['TopLevelSpec', 'TopLevelUnitSpec', ...specificationKinds.map(([, name]) => name)];
  return new Map(names.map((name) => [name, ajv.compile({ $ref: `vega-lite#/definitions/${name}` })]));
}

/**
 * The schema's unions make the validator report every branch that failed. An unknown property in
 * one branch is dropped when another branch knew it (errors below it exist), and the values allowed
 * at one place are gathered into one line, so what is left is what the model actually got wrong.
 */
function describeProblems(errors: ErrorObject[]): string[] {
  const specific = errors.filter((error) => !['anyOf', 'oneOf', 'if', 'not'].includes(error.keyword));
  const known = specific.filter((error) => !(['additionalProperties', 'required'].includes(error.keyword) && explainedBelow(error, specific)));
  const allowedValues = new Map<string, unknown[]>();
  for (const error of known) {
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'enum') allowedValues.set(error.instancePath, [...(allowedValues.get(error.instancePath) ?? []), ...(params.allowedValues as unknown[])]);
    if (error.keyword === 'const') allowedValues.set(error.instancePath, [...(allowedValues.get(error.instancePath) ?? []), params.allowedValue]);
  }
  const lines = new Set<string>();
  for (const error of [...known].sort((first, second) => rank(first) - rank(second) || depthOf(second.instancePath) - depthOf(first.instancePath))) {
    const values = allowedValues.get(error.instancePath);
    if (values && error.keyword === 'type') continue;
    lines.add(values && (error.keyword === 'enum' || error.keyword === 'const')
      ? `${placeOf(error)} must be one of ${[...new Set(values.map((value) => JSON.stringify(value)))].join(', ')}`
      : describe(error));
  }
  const problems = [...lines];
  if (problems.length === 0) return [`the specification ${errors[0]?.message ?? 'is not valid'}`];
  return problems.length > maximumReportedProblems
    ? [...problems.slice(0, maximumReportedProblems), `and ${problems.length - maximumReportedProblems} more`]
    : problems;
}

/**
 * An unknown or missing property is another branch's complaint when a branch that knew the
 * property went further: a wrong value below it, or errors inside the property itself.
 */
function explainedBelow(error: ErrorObject, errors: ErrorObject[]): boolean {
  const here = error.instancePath;
  if (errors.some((other) => ['enum', 'const'].includes(other.keyword) && other.instancePath.startsWith(`${here}/`))) return true;
  if (error.keyword !== 'additionalProperties') return false;
  const below = `${here}/${String((error.params as Record<string, unknown>).additionalProperty)}`;
  return errors.some((other) => other.instancePath === below || other.instancePath.startsWith(`${below}/`));
}

function rank(error: ErrorObject): number {
  if (error.keyword === 'additionalProperties') return 0;
  if (error.keyword === 'enum' || error.keyword === 'const') return 1;
  if (error.keyword === 'required') return 2;
  return 3;
}

function depthOf(instancePath: string): number {
  return instancePath === '' ? 0 : instancePath.split('/').length - 1;
}

function placeOf(error: ErrorObject): string {
  return error.instancePath === '' ? 'the specification' : `"${error.instancePath.slice(1).replaceAll('/', '.')}"`;
}

function describe(error: ErrorObject): string {
  const where = placeOf(error);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${where} has an unknown property "${String(params.additionalProperty)}"`;
    case 'enum':
      return `${where} must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
    case 'const':
      return `${where} must be ${JSON.stringify(params.allowedValue)}`;
    case 'required':
      return `${where} is missing the property "${String(params.missingProperty)}"`;
    default:
      return `${where} ${error.message ?? 'is not valid'}`;
  }
}
