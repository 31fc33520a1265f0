/**
 * An eval file (`*.eval.yaml`): validated against its schema like every YAML kind, with each
 * problem at file:line:column and unknown keys answered with a "did you mean"; its dataset read
 * (inline rows, JSON Lines or CSV), its patterns compiled and its plugin scorers loaded, all before
 * any model call. An eval file is trusted as a recipe is, not as the user's configuration.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { validateConfig } from '../../config/config-schemas.js';
import type { EvalYaml, RowYaml, ScorerYaml } from '../../config/schema-types.generated.js';
import { locate, locateKey, readYamlFile, type YamlSource } from '../../config/yaml-source.js';
import { ConfigError, UsageError, type Diagnostic, type SourceLocation } from '../../contract/errors.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import type { Recipe } from '../../config/types.js';
import type { ScorerDefinition } from '../../contract/scorer.js';
import { loadPluginModule } from '../../kernel/plugin-loading/load-plugins.js';
import { contentHash, readBatchInputs } from '../batch/batch-inputs.js';

export type ScorerType = ScorerYaml['type'];

export interface EvalRow {
  /** The row's name in tables and baselines: its `id`, or its number from 1. */
  id: string;
  parameters: Record<string, string>;
  expected: unknown;
}

export interface EvalScorer {
  type: ScorerType;
  name: string;
  threshold: number;
  weight: number;
  settings: ScorerYaml;
  /** regex, files with matches: compiled once. */
  pattern?: RegExp;
  /** plugin: what the file exports. */
  plugin?: ScorerDefinition;
  location: SourceLocation;
}

export interface EvalDefinition {
  file: string;
  name: string;
  description?: string;
  /** As written, relative to the eval file (or a pack's recipe name). */
  recipe: string;
  /** The recipe's file or pack name, relative to the eval file's folder when a file. */
  recipeArgument: string;
  rows: EvalRow[];
  scorers: EvalScorer[];
  judge?: string;
  /** The eval file's and dataset's content, so a resumed eval knows they did not change. */
  hash: string;
}

export async function loadEvalFile(file: string): Promise<EvalDefinition> {
  const { source, diagnostics } = readYamlFile(file);
  if (!source) throw new ConfigError(diagnostics);
  const problems = validateConfig('eval', source);
  if (problems.length > 0) throw new ConfigError(problems);
  const data = source.data as EvalYaml;
  const errors: Diagnostic[] = [];
  const folder = dirname(file);
  const dataset = readDataset(source, data, folder, errors);
  const scorers = await Promise.all(data.scorers.map((scorer, index) => readScorer(source, scorer, index, folder, errors)));
  const names = new Set<string>();
  scorers.forEach((scorer, index) => {
    if (names.has(scorer.name)) errors.push({ severity: 'error', message: `two scorers are named '${scorer.name}'; give one a name: of its own`, location: locate(source, ['scorers', index]) });
    names.add(scorer.name);
  });
  if (scorers.some((scorer) => scorer.type === 'judge' && !scorer.settings.profile) && !data.judge) {
    const index = scorers.findIndex((scorer) => scorer.type === 'judge' && !scorer.settings.profile);
    errors.push({ severity: 'error', message: 'a judge scorer needs a model profile: give it profile:, or the eval a judge:', location: locate(source, ['scorers', index]) });
  }
  if (errors.length > 0) throw new ConfigError(errors);
  const isFile = data.recipe.endsWith('.yaml') || data.recipe.endsWith('.yml');
  return {
    file,
    name: data.name ?? basename(file).replace(/\.eval\.ya?ml$|\.ya?ml$/, ''),
    ...(data.description ? { description: data.description } : {}),
    recipe: data.recipe,
    recipeArgument: isFile ? resolve(folder, data.recipe) : data.recipe,
    rows: dataset.rows,
    scorers,
    ...(data.judge ? { judge: data.judge } : {}),
    hash: contentHash(source.text + (dataset.text ?? '')),
  };
}

function readDataset(source: YamlSource, data: EvalYaml, folder: string, errors: Diagnostic[]): { rows: EvalRow[]; text?: string } {
  if (typeof data.dataset !== 'string') {
    const ids = new Set<string>();
    const rows = data.dataset.rows.map((row, index) => {
      const read = rowOf(row, index);
      if (ids.has(read.id)) errors.push({ severity: 'error', message: `two rows have the id '${read.id}'`, location: locate(source, ['dataset', 'rows', index, 'id']) });
      ids.add(read.id);
      return read;
    });
    return { rows };
  }
  const path = resolve(folder, data.dataset);
  const where = locate(source, ['dataset']);
  try {
    const text = readFileSync(path, 'utf8');
    const kind = extname(path).toLowerCase();
    if (kind === '.jsonl' || kind === '.ndjson') return { rows: jsonLinesRows(text, data.dataset), text };
    if (kind === '.csv') return { rows: csvRows(path, data.dataset), text };
    errors.push({ severity: 'error', message: `the dataset ${data.dataset} must end in .jsonl or .csv, or be rows: written inline`, location: where });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message;
    errors.push({ severity: 'error', message: `cannot read the dataset ${data.dataset}: ${reason}`, location: where });
  }
  return { rows: [] };
}

function rowOf(row: RowYaml, index: number): EvalRow {
  const parameters = Object.fromEntries(Object.entries(row.parameters ?? {}).map(([key, value]) => [key, String(value)]));
  return { id: row.id ?? String(index + 1), parameters, expected: row.expected };
}

/** Each line `{"id": ..., "parameters": {...}, "expected": ...}`. */
function jsonLinesRows(text: string, file: string): EvalRow[] {
  const rows: EvalRow[] = [];
  text.split('\n').forEach((raw, lineIndex) => {
    if (raw.trim() === '') return;
    const where = `${file}:${lineIndex + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new ConfigError([{ severity: 'error', message: `${where}: not valid JSON (${(error as Error).message})` }]);
    }
    const row = value as RowYaml;
    const unknown = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value).filter((key) => !['id', 'parameters', 'expected'].includes(key)) : ['(not an object)'];
    if (unknown.length > 0) throw new ConfigError([{ severity: 'error', message: `${where}: each line is an object with id, parameters and expected; not ${unknown.join(', ')}` }]);
    rows.push(rowOf(row, rows.length));
  });
  return rows;
}

/** Columns `expected` or `expected.<key>` are the expectations, `id` the row's id, the rest parameters. */
function csvRows(path: string, file: string): EvalRow[] {
  return readBatchInputs(path, file).items.map((item, index) => {
    const parameters: Record<string, string> = {};
    let expected: unknown;
    const expectedFields: Record<string, string> = {};
    let id = String(index + 1);
    for (const [key, value] of Object.entries(item.parameters)) {
      if (key === 'id') id = value;
      else if (key === 'expected') expected = value;
      else if (key.startsWith('expected.')) expectedFields[key.slice('expected.'.length)] = value;
      else parameters[key] = value;
    }
    return { id, parameters, expected: Object.keys(expectedFields).length > 0 ? expectedFields : expected };
  });
}

const needs: Partial<Record<ScorerType, Array<keyof ScorerYaml>>> = {
  equals: ['value'],
  includes: ['value'],
  regex: ['pattern'],
  number: ['value'],
  json_schema: ['schema'],
  field: ['path'],
  files: ['path'],
  tool_called: ['tool'],
  tool_not_called: ['tool'],
  max_steps: ['limit'],
  max_cost: ['limit'],
  judge: ['rubric'],
  plugin: ['file'],
};

/** The keys each type reads beside type, name, threshold and weight: another is a mistake, not a no-op. */
const keysOf: Record<ScorerType, Array<keyof ScorerYaml>> = {
  checks: [],
  equals: ['value', 'case_sensitive'],
  includes: ['value', 'case_sensitive'],
  regex: ['pattern', 'path'],
  number: ['value', 'tolerance', 'relative', 'path'],
  json_schema: ['schema'],
  field: ['path', 'value', 'case_sensitive'],
  files: ['path', 'matches'],
  tool_called: ['tool'],
  tool_not_called: ['tool'],
  max_steps: ['limit'],
  max_cost: ['limit'],
  judge: ['rubric', 'profile'],
  plugin: ['file', 'options'],
};

async function readScorer(source: YamlSource, settings: ScorerYaml, index: number, folder: string, errors: Diagnostic[]): Promise<EvalScorer> {
  const location = locate(source, ['scorers', index]);
  const allowed = new Set<string>(['type', 'name', 'threshold', 'weight', ...keysOf[settings.type]]);
  for (const key of Object.keys(settings).filter((each) => !allowed.has(each))) {
    const owners = (Object.keys(keysOf) as ScorerType[]).filter((type) => (keysOf[type] as string[]).includes(key));
    errors.push({ severity: 'error', message: `${article(settings.type)} ${settings.type} scorer does not read ${key}:${owners.length > 0 ? ` it belongs to ${owners.join(', ')}` : ''}${didYouMean(key, [...allowed])}`, location: locateKey(source, ['scorers', index], key) });
  }
  for (const key of needs[settings.type] ?? []) {
    if (settings[key] === undefined) errors.push({ severity: 'error', message: `${article(settings.type)} ${settings.type} scorer needs ${key}:`, location });
  }
  const scorer: EvalScorer = {
    type: settings.type,
    name: settings.name ?? (settings.type === 'tool_called' || settings.type === 'tool_not_called' ? `${settings.type}:${settings.tool}` : settings.type),
    threshold: settings.threshold ?? (settings.type === 'judge' ? 0.5 : 1),
    weight: settings.weight ?? 1,
    settings,
    location,
  };
  const pattern = settings.type === 'regex' ? settings.pattern : settings.type === 'files' ? settings.matches : undefined;
  if (pattern !== undefined) {
    try {
      scorer.pattern = new RegExp(pattern, 'm');
    } catch (error) {
      errors.push({ severity: 'error', message: `not a valid regular expression: ${(error as Error).message}`, location: locate(source, ['scorers', index, settings.type === 'regex' ? 'pattern' : 'matches']) });
    }
  }
  if (settings.type === 'plugin' && settings.file) {
    const file = resolve(folder, settings.file);
    try {
      const loaded = await loadPluginModule(file) as { default?: unknown };
      const value = (loaded?.default ?? loaded) as Partial<ScorerDefinition> | undefined;
      if (!value || typeof value.score !== 'function' || typeof value.name !== 'string') {
        errors.push({ severity: 'error', message: `${settings.file} does not default-export a scorer made with defineScorer({ name, score })`, location: locate(source, ['scorers', index, 'file']) });
      } else {
        scorer.plugin = value as ScorerDefinition;
        if (!settings.name) scorer.name = value.name;
      }
    } catch (error) {
      errors.push({ severity: 'error', message: `the scorer plugin ${settings.file} failed to load: ${(error as Error).message.split('\n')[0]}`, location: locate(source, ['scorers', index, 'file']) });
    }
  }
  return scorer;
}

/** Every row's parameters against the recipe's, each problem named by its row, before anything runs. */
export function checkRowParameters(recipe: Recipe, definition: EvalDefinition): void {
  const names = new Set(recipe.parameters.map((parameter) => parameter.name));
  const required = recipe.parameters.filter((parameter) => parameter.required && parameter.default === undefined);
  const problems: string[] = [];
  for (const row of definition.rows) {
    for (const key of Object.keys(row.parameters)) {
      if (!names.has(key)) problems.push(`row ${row.id}: the recipe ${recipe.name} has no parameter '${key}'${didYouMean(key, names)}`);
    }
    for (const parameter of required) {
      if (row.parameters[parameter.name] === undefined) problems.push(`row ${row.id}: the required parameter '${parameter.name}' is missing`);
    }
  }
  if (problems.length === 0) return;
  const listed = problems.slice(0, 20).map((problem) => `  ${problem}`).join('\n');
  throw new UsageError(`the rows of ${basename(definition.file)} do not fit the recipe's parameters:\n${listed}${problems.length > 20 ? `\n  and ${problems.length - 20} more` : ''}`);
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}
