/**
 * The runtime's layers, read from the code by dependency-cruiser with the rules in
 * .dependency-cruiser.cjs: the check that test/architecture.test.ts runs, and the picture in
 * docs/architecture.md, which `npm run architecture:graph` writes from the same cruise.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, format, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

export const repositoryRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const architectureDocument = join(repositoryRoot, 'docs', 'architecture.md');
const configFile = join(repositoryRoot, '.dependency-cruiser.cjs');
const checkedFolders = ['runtime', 'plugins', 'cli'];

/** Each layer folder of runtime/ one box; the plugins and the command one box each. */
const layerBoxes = '^(runtime/[^/]+/|plugins/|cli/)';
const graphStart = '<!-- The layer picture below is written by `npm run architecture:graph`; do not edit it by hand. -->';
const graphEnd = '<!-- End of the generated layer picture. -->';

export interface Violation {
  rule: string;
  from: string;
  to: string;
  /** For a circle: the files it runs through, from `to` back to `from`. */
  cycle?: string[];
}

/** Cruises `folders` under `baseDirectory` (the repository by default) with the project's rules. */
export async function cruiseLayers(baseDirectory = repositoryRoot, folders = checkedFolders): Promise<ICruiseResult> {
  const options: ICruiseOptions = { ...(await extractDepcruiseOptions(configFile)), baseDir: baseDirectory, validate: true };
  const usesTypeScriptConfig = baseDirectory === repositoryRoot;
  const transpile = usesTypeScriptConfig ? { tsConfig: extractTSConfig(join(repositoryRoot, 'tsconfig.json')) } : {};
  if (!usesTypeScriptConfig) delete options.tsConfig;
  const { output } = await cruise(folders, options, {}, transpile);
  if (typeof output === 'string') throw new Error('dependency-cruiser gave text where a result was expected');
  return output;
}

export function violationsOf(result: ICruiseResult): Violation[] {
  return result.summary.violations.map((violation) => ({
    rule: violation.rule.name,
    from: violation.from,
    to: violation.to,
    ...(violation.cycle ? { cycle: violation.cycle.map((step) => (typeof step === 'string' ? step : step.name)) } : {}),
  }));
}

export function describeViolation(violation: Violation): string {
  const through = violation.cycle ? ` (circle: ${[violation.from, ...violation.cycle].join(' → ')})` : '';
  return `${violation.rule}: ${violation.from} → ${violation.to}${through}`;
}

/** The layers and the imports between them, as a mermaid flowchart. */
export async function layerGraph(result: ICruiseResult): Promise<string> {
  const { output } = await format(result, { outputType: 'mermaid', collapse: layerBoxes });
  return String(output).trim();
}

/** docs/architecture.md with its picture replaced by `graph`. */
export function withGraph(document: string, graph: string): string {
  const start = document.indexOf(graphStart);
  const end = document.indexOf(graphEnd);
  if (start < 0 || end < start) throw new Error(`docs/architecture.md has no generated picture between "${graphStart}" and "${graphEnd}"`);
  return `${document.slice(0, start + graphStart.length)}\n\n\`\`\`mermaid\n${graph}\n\`\`\`\n\n${document.slice(end)}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await cruiseLayers();
  const document = readFileSync(architectureDocument, 'utf8');
  writeFileSync(architectureDocument, withGraph(document, await layerGraph(result)));
  const violations = violationsOf(result);
  for (const violation of violations) console.error(describeViolation(violation));
  process.exitCode = violations.length > 0 ? 1 : 0;
}
