/**
 * `{ file, schema?, matches? }`: the file must exist inside the workspace; with `schema` it must
 * parse (JSON, or YAML for .yaml/.yml) and satisfy the schema; with `matches` its text must
 * contain a match of the regular expression.
 */
import type { ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { compileJsonSchema } from '../../contract/json-schema.js';
import { errorMessage, ToolError } from '../../contract/errors.js';
import { WorkspaceFiles, type WorkspaceEntryInformation } from '../../services/workspace-files.js';
import { compileCheckPattern } from './check-pattern.js';
import type { CheckDefinition, CheckInput, CheckResult } from '../../config/check-types.js';

type FileCheck = Extract<CheckDefinition, { kind: 'file' }>;

/** Larger files are not read: a check that needs to look inside one should be a command. */
export const largestCheckedFileBytes = 16 * 1024 * 1024;
const reportedSchemaErrors = 10;

export async function runFileCheck(check: FileCheck, input: Pick<CheckInput, 'workspace'>): Promise<CheckResult> {
  const started = performance.now();
  const detail = await fileProblem(check, input.workspace);
  return {
    name: check.name,
    kind: 'file',
    passed: detail === undefined,
    detail: detail ?? `${check.file} exists${check.schema ? ', matches its schema' : ''}${check.matches ? `, matches /${check.matches}/` : ''}`,
    durationMs: Math.round(performance.now() - started),
  };
}

/**
 * Why the file fails the check, or undefined when it passes. Read through the workspace's open
 * folders: processes the agent left running may still be swapping folders for links.
 */
async function fileProblem(check: FileCheck, workspace: string): Promise<string | undefined> {
  let files: WorkspaceFiles;
  let facts: WorkspaceEntryInformation;
  try {
    files = new WorkspaceFiles(workspace);
    facts = await files.inspect(check.file);
  } catch (error) {
    if (ToolError.isInstance(error) && error.code === 'file_not_found') return `${check.file} does not exist in the workspace`;
    return errorMessage(error);
  }
  if (facts.kind !== 'file') return `${check.file} is not a regular file`;
  if (check.schema === undefined && check.matches === undefined) return undefined;
  if (facts.size > largestCheckedFileBytes) {
    return `${check.file} is ${facts.size} bytes, more than the ${largestCheckedFileBytes} bytes a file check reads`;
  }
  let text: string;
  try {
    text = (await files.readFile(check.file, { maximumBytes: largestCheckedFileBytes })).toString('utf8');
  } catch (error) {
    return `${check.file} could not be read: ${errorMessage(error)}`;
  }
  if (check.schema !== undefined) {
    const problem = schemaProblem(check, text);
    if (problem) return problem;
  }
  if (check.matches !== undefined && !compileCheckPattern(check.matches).test(text)) {
    return `${check.file} has no match for /${check.matches}/`;
  }
  return undefined;
}

function schemaProblem(check: FileCheck, text: string): string | undefined {
  const yaml = /\.ya?ml$/i.test(check.file);
  let document: unknown;
  try {
    document = yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    return `${check.file} is not valid ${yaml ? 'YAML' : 'JSON'}: ${errorMessage(error)}`;
  }
  const validate = compileJsonSchema(check.schema!);
  if (validate(document)) return undefined;
  const errors = validate.errors ?? [];
  const listed = errors.slice(0, reportedSchemaErrors).map((error) => `  - ${describeSchemaError(error)}`);
  const more = errors.length > reportedSchemaErrors ? [`  - and ${errors.length - reportedSchemaErrors} more`] : [];
  return [`${check.file} does not match its schema:`, ...listed, ...more].join('\n');
}

export function describeSchemaError(error: ErrorObject): string {
  const where = error.instancePath === '' ? 'the document' : error.instancePath;
  const params = error.params as Record<string, unknown>;
  const extra =
    error.keyword === 'additionalProperties' ? ` ('${String(params.additionalProperty)}')`
    : error.keyword === 'enum' ? ` (${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')})`
    : '';
  return `${where} ${error.message ?? 'is invalid'}${extra}`;
}
