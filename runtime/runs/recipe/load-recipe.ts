/** Loads a recipe: schema, prompt template against parameters, inline agent, plugin folders. */
import { dirname, resolve } from 'node:path';
import type { Diagnostic, SourceLocation } from '../../contract/errors.js';
import { readAgentDefinition, readPermissions, readSandbox } from '../../config/agent-definition.js';
import { sandboxHostDiagnostics } from '../../services/network/sandbox-hosts.js';
import { readChecks, readRetryPolicy } from '../../features/checks/read-checks.js';
import { validateConfig } from '../../config/config-schemas.js';
import { loadPrompt, type LoadedPrompt } from '../../config/prompt-source.js';
import { closestName } from '../../contract/did-you-mean.js';
import { readSettingLocations } from '../../config/setting-locations.js';
import { templatePlaceholders, unknownPlaceholderForms } from '../../config/template.js';
import { recipeDefaults } from '../../config/defaults.js';
import type { ParameterYaml, RecipeYaml } from '../../config/schema-types.generated.js';
import type { ParameterValue, Recipe, RecipeParameter } from '../../config/types.js';
import { locate, locateKey, readYamlFile, type YamlSource } from '../../config/yaml-source.js';
import { readMcpServers } from '../../features/mcp/server-config.js';
import { readA2aAgents } from '../../features/a2a/a2a-config.js';
import { readFlow } from '../../features/flow/read-flow.js';

export function loadRecipeFile(file: string): { recipe?: Recipe; diagnostics: Diagnostic[] } {
  const { source, diagnostics } = readYamlFile(file);
  if (!source) return { diagnostics };
  const schemaDiagnostics = validateConfig('recipe', source);
  if (schemaDiagnostics.length > 0) return { diagnostics: [...schemaDiagnostics, ...checkReadableParts(source)] };
  return loadRecipeSource(source);
}

/**
 * A recipe the schema rejects still gets its parameters and templates checked, as far as they can
 * be read, so one round of fixes covers every problem.
 */
function checkReadableParts(source: YamlSource): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const data = (source.data && typeof source.data === 'object' ? source.data : {}) as Record<string, unknown>;
  const rawParameters = isRecord(data.parameters) ? data.parameters : {};
  const readable = Object.fromEntries(Object.entries(rawParameters).map(([name, definition]) => [name, readableParameter(definition)]));
  const parameters = readParameters(source, readable, diagnostics);
  const prompt = typeof data.prompt === 'string' || isRecord(data.prompt) ? loadPrompt(source, ['prompt'], data.prompt, diagnostics) : undefined;
  const workspace = typeof data.workspace === 'string' ? data.workspace : undefined;
  if (prompt) checkTemplate(source, prompt, workspace, parameters, diagnostics);
  return diagnostics;
}

/** The parts of a parameter definition that have the right shape; a misspelt type is read as the type it is closest to. */
function readableParameter(definition: unknown): Partial<ParameterYaml> {
  if (!isRecord(definition)) return {};
  const type = typeof definition.type === 'string' ? knownTypeFor(definition.type) : undefined;
  const values = Array.isArray(definition.values) && definition.values.every((value) => typeof value === 'string') ? definition.values : undefined;
  const fits = ['string', 'number', 'boolean'].includes(typeof definition.default) || isStringList(definition.default);
  return {
    type,
    required: typeof definition.required === 'boolean' ? definition.required : undefined,
    default: fits ? (definition.default as ParameterValue) : undefined,
    values,
  };
}

const parameterTypes: ReadonlyArray<ParameterYaml['type']> = ['string', 'number', 'boolean', 'enum', 'list'];

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** The type a misspelt or shortened one (`bool`, `str`) most likely means. */
function knownTypeFor(type: string): ParameterYaml['type'] | undefined {
  const lower = type.toLowerCase();
  const known = parameterTypes.find((name) => name === type || (lower.length >= 3 && name.startsWith(lower)));
  return known ?? parameterTypes.find((name) => name === closestName(type, parameterTypes));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function loadRecipeSource(source: YamlSource): { recipe?: Recipe; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const data = source.data as RecipeYaml;
  const folder = dirname(source.file);
  const parameters = readParameters(source, data.parameters ?? {}, diagnostics);
  const prompt = data.prompt === undefined ? undefined : loadPrompt(source, ['prompt'], data.prompt, diagnostics);
  const workspace = typeof data.workspace === 'string' ? data.workspace : undefined;
  // A flow's templates are checked with its steps, once the kinds they use are loaded.
  if (prompt && data.flow === undefined) checkTemplate(source, prompt, workspace, parameters, diagnostics);
  checkAgentOrFlow(source, data, diagnostics);
  const agent = typeof data.agent === 'string' || data.agent === undefined
    ? data.agent
    : readAgentDefinition(`${data.name} (inline)`, data.agent, source, ['agent'], diagnostics);
  const flow = data.flow === undefined ? undefined : readFlow(source, data.flow, data.answer, diagnostics);
  if (typeof agent === 'object') diagnostics.push(...sandboxHostDiagnostics(agent.sandbox));
  const recipe: Recipe = {
    file: source.file,
    name: data.name,
    description: data.description ?? recipeDefaults.description,
    parameters,
    promptTemplate: prompt?.text,
    promptFile: prompt?.file,
    agent,
    agentLocation: locate(source, ['agent']),
    flow,
    pluginFolders: (data.plugins ?? []).map((path, index) => ({
      path: resolve(folder, path),
      location: locate(source, ['plugins', index]),
    })),
    packs: (data.packs ?? []).map((name, index) => ({ name, location: locate(source, ['packs', index]) })),
    budgets: {
      steps: data.budgets?.steps,
      tokens: data.budgets?.tokens,
      timeSeconds: data.budgets?.time_seconds,
      cost: data.budgets?.cost,
    },
    response: data.response,
    workspace,
    sandbox: readSandbox(data.sandbox, source, ['sandbox'], diagnostics),
    permissions: data.permissions === undefined ? undefined : readPermissions(data.permissions, { source, path: ['permissions'], diagnostics }),
    toolSettings: data.tool_settings ?? {},
    answers: data.answers ?? {},
    checks: [],
    retry: { maxAttempts: recipeDefaults.retry.max_attempts },
    mcpServers: readMcpServers(source, ['mcp_servers'], data.mcp_servers, 'project', diagnostics),
    a2aAgents: readA2aAgents(source, ['a2a'], data.a2a, 'project', diagnostics),
    settingLocations: readSettingLocations(source, [], data),
  };
  const checks = readChecks(data.checks, { responseSchema: data.response });
  const retry = readRetryPolicy(data.retry);
  recipe.checks = checks.checks;
  recipe.retry = retry.retry;
  for (const problem of [...checks.problems, ...retry.problems]) {
    diagnostics.push({ severity: 'error', message: problem.message, location: locate(source, problem.path) });
  }
  diagnostics.push(...sandboxHostDiagnostics(recipe.sandbox));
  return { recipe, diagnostics };
}

/** A recipe runs one agent or a flow of steps; a flow's steps carry their own prompts and answers. */
function checkAgentOrFlow(source: YamlSource, data: RecipeYaml, diagnostics: Diagnostic[]): void {
  const error = (message: string, path: string[] = []) => diagnostics.push({ severity: 'error', message, location: locate(source, path) });
  if (data.agent === undefined && data.flow === undefined) error('a recipe needs agent: (one agent runs the prompt) or flow: (steps run in order)');
  if (data.agent !== undefined && data.flow !== undefined) error('a recipe has agent: or flow:, not both: a flow names the agent of each step', ['flow']);
  if (data.flow === undefined) {
    if (data.answer !== undefined) error('answer: is a flow\'s answer; a recipe with one agent answers with what the agent gives', ['answer']);
    return;
  }
  if (data.prompt !== undefined) error('a flow has no top-level prompt: each step has its own (use the parameters there as {{name}})', ['prompt']);
  if (data.response !== undefined) error('a flow\'s structured answers come from its steps: give the step a response: schema, and the flow answer: "{{steps.<name>.answer}}"', ['response']);
  if ((data.retry?.max_attempts ?? 1) > 1) error('retry: is for recipes with one agent; in a flow, a step that fails stops it unless it has continue_on_failure: true', ['retry']);
}

function readParameters(source: YamlSource, raw: Record<string, Partial<ParameterYaml>>, diagnostics: Diagnostic[]): RecipeParameter[] {
  return Object.entries(raw).map(([name, definition]) => {
    const location = locateKey(source, ['parameters'], name);
    const parameter: RecipeParameter = {
      name,
      // Undefined only for a recipe the schema rejected; parameterProblem then checks nothing against it.
      type: definition.type as RecipeParameter['type'],
      description: definition.description,
      required: definition.required === true || (definition.required === undefined && definition.default === undefined),
      default: definition.default,
      values: definition.values,
      location,
    };
    const problem = parameterProblem(parameter, definition.required);
    if (problem) diagnostics.push({ severity: 'error', message: `parameter '${name}' ${problem}`, location });
    return parameter;
  });
}

function parameterProblem(parameter: RecipeParameter, declaredRequired: unknown): string | undefined {
  // Without a known type there is nothing to check the default and values against.
  if (!parameterTypes.includes(parameter.type)) return undefined;
  // Filling an absent value with an empty string would hide a missing input; a default says what the prompt gets.
  if (declaredRequired === false && parameter.default === undefined) return 'is optional (required: false) but has no default: an optional parameter needs a default';
  if (parameter.type === 'enum' && !parameter.values) return "is an enum but lists no 'values'";
  if (parameter.type !== 'enum' && parameter.values) return `has 'values' but its type is ${parameter.type}, not enum`;
  if (parameter.default === undefined) return undefined;
  if (parameter.type === 'enum') {
    return parameter.values?.includes(String(parameter.default)) ? undefined : `default '${parameter.default}' is not one of its values: ${parameter.values?.join(', ')}`;
  }
  if (parameter.type === 'list') return isStringList(parameter.default) ? undefined : `default ${JSON.stringify(parameter.default)} is not a list of strings`;
  if (Array.isArray(parameter.default)) return `default ${JSON.stringify(parameter.default)} is a list, but its type is ${parameter.type}, not list`;
  return typeof parameter.default === parameter.type ? undefined : `default ${JSON.stringify(parameter.default)} is not a ${parameter.type}`;
}

function checkTemplate(
  source: YamlSource,
  prompt: LoadedPrompt,
  workspace: string | undefined,
  parameters: RecipeParameter[],
  diagnostics: Diagnostic[],
): void {
  const declared = new Set(parameters.map((parameter) => parameter.name));
  const used = new Set<string>();
  for (const placeholder of templatePlaceholders(workspace ?? '')) {
    used.add(placeholder.name);
    if (declared.has(placeholder.name)) continue;
    diagnostics.push({
      severity: 'error',
      message: `the workspace uses {{${placeholder.name}}} but the recipe declares no parameter '${placeholder.name}'`,
      location: locate(source, ['workspace']),
    });
  }
  for (const placeholder of templatePlaceholders(prompt.text)) {
    used.add(placeholder.name);
    if (declared.has(placeholder.name)) continue;
    diagnostics.push({
      severity: 'error',
      message: `the prompt uses {{${placeholder.name}}} but the recipe declares no parameter '${placeholder.name}'`,
      location: placeholderLocation(source, prompt, placeholder.name, placeholder.offset),
    });
  }
  for (const parameter of parameters) {
    if (used.has(parameter.name)) continue;
    diagnostics.push({
      severity: 'error',
      message: `parameter '${parameter.name}' is never used in the prompt or the workspace (add {{${parameter.name}}} or remove it)`,
      location: parameter.location,
    });
  }
  for (const form of unknownPlaceholderForms(workspace ?? '')) {
    diagnostics.push({ severity: 'error', message: `the workspace uses ${form.text}, ${unknownFormHint}`, location: locate(source, ['workspace']) });
  }
  for (const form of unknownPlaceholderForms(prompt.text)) {
    diagnostics.push({
      severity: 'error',
      message: `the prompt uses ${form.text}, ${unknownFormHint}`,
      location: placeholderLocation(source, prompt, form.text.slice(2, -2), form.offset),
    });
  }
}

const unknownFormHint = 'which is not a placeholder: a placeholder is {{name}} with the name of a parameter, and nothing else goes between {{ and }}';

/**
 * A placeholder's position: in a prompt file it is exact; in inline YAML the scalar's text may be
 * folded or quoted, so the placeholder is searched for in the scalar's source text.
 */
function placeholderLocation(source: YamlSource, prompt: LoadedPrompt, inner: string, offset: number): SourceLocation {
  if (prompt.file) return positionInText(prompt.file, prompt.text, offset);
  const node = source.document.get('prompt', true) as { range?: [number, number, number] } | undefined;
  if (node?.range) {
    const raw = source.text.slice(node.range[0], node.range[1]);
    const escaped = inner.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const match = new RegExp(`\\{\\{\\s*${escaped}\\s*\\}\\}`).exec(raw);
    if (match) {
      const position = source.lineCounter.linePos(node.range[0] + match.index);
      return { file: source.file, line: position.line, column: position.col };
    }
  }
  return prompt.location;
}

function positionInText(file: string, text: string, offset: number): SourceLocation {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return { file, line, column };
}
