/**
 * Reads a recipe's `flow:` the schema accepted: each step's name, kind and budgets, and the fields
 * of the kernel's kinds, with every problem located in the file. Names are unique across the flow,
 * since later steps refer to earlier ones by name.
 */
import type { Diagnostic } from '../../contract/errors.js';
import { readPermissions } from '../../config/agent-definition.js';
import { readAgentDefinition } from '../../config/agent-definition.js';
import { sandboxHostDiagnostics } from '../../services/network/sandbox-hosts.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import type { AgentYaml, BudgetsYaml, FlowStepYaml } from '../../config/schema-types.generated.js';
import { locate, locateKey, type YamlSource } from '../../config/yaml-source.js';
import { commonStepFields, isKernelStepKind, kernelStepKinds, type FlowDefinition, type FlowStepDefinition } from '../../config/flow-definition.js';

export function readFlow(source: YamlSource, raw: FlowStepYaml[], answer: string | undefined, diagnostics: Diagnostic[]): FlowDefinition {
  const names = new Map<string, Array<string | number>>();
  const steps = raw.map((step, index) => readStep(source, step, ['flow', index], undefined, names, diagnostics));
  return { steps, answer, source };
}

function readStep(
  source: YamlSource,
  raw: FlowStepYaml,
  path: Array<string | number>,
  inheritedName: string | undefined,
  names: Map<string, Array<string | number>>,
  diagnostics: Diagnostic[],
): FlowStepDefinition {
  const location = locate(source, path);
  const error = (message: string, at: Array<string | number> = path) => diagnostics.push({ severity: 'error', message, location: locate(source, at) });
  const name = inheritedName ?? raw.name ?? '';
  if (inheritedName === undefined) {
    if (raw.name === undefined) error('a flow step needs a name: later steps and the run\'s events refer to it');
    else if (names.has(raw.name)) error(`two flow steps are named '${raw.name}'; step names must be unique in a flow`, [...path, 'name']);
    else names.set(raw.name, path);
  } else if (raw.name !== undefined) {
    error(`the step of a for_each fan-out takes the name of its parallel step ('${inheritedName}'); remove name: '${raw.name}'`, [...path, 'name']);
  }
  const fields = Object.fromEntries(Object.entries(raw).filter(([key]) => !(commonStepFields as readonly string[]).includes(key)));
  const step: FlowStepDefinition = {
    name,
    kind: raw.kind,
    yamlPath: path,
    location,
    budgets: readBudgets(raw.budgets),
    continueOnFailure: raw.continue_on_failure === true,
    ...(raw.permissions === undefined ? {} : { permissions: readPermissions(raw.permissions, { source, path: [...path, 'permissions'], diagnostics }) }),
    fields,
  };
  if (!isKernelStepKind(raw.kind)) {
    // A plugin's kind: its fields are checked against its schema once it is loaded.
    return step;
  }
  const allowed: readonly string[] = [...commonStepFields, ...kernelStepKinds[raw.kind]];
  for (const key of Object.keys(raw)) {
    if (allowed.includes(key)) continue;
    const otherKind = Object.entries(kernelStepKinds).find(([, keys]) => (keys as readonly string[]).includes(key))?.[0];
    const hint = otherKind ? ` (${key} belongs to ${otherKind} steps)` : didYouMean(key, allowed);
    diagnostics.push({ severity: 'error', message: `a ${raw.kind} step has no field '${key}'${hint}`, location: locateKey(source, path, key) });
  }
  if (raw.kind === 'agent') {
    if (raw.agent === undefined) error(`the agent step '${name}' needs agent: (a name from agents.yaml, or an agent written inline)`);
    if (raw.prompt === undefined) error(`the agent step '${name}' needs prompt: (its task, a template)`);
    step.agent = typeof raw.agent === 'object'
      ? readAgentDefinition(`${name} (inline)`, raw.agent as AgentYaml, source, [...path, 'agent'], diagnostics)
      : raw.agent;
    if (typeof step.agent === 'object') diagnostics.push(...sandboxHostDiagnostics(step.agent.sandbox));
    step.prompt = raw.prompt;
    step.response = raw.response;
    return step;
  }
  if ((raw.steps === undefined) === (raw.step === undefined)) {
    error(`the parallel step '${name}' needs either steps: (named steps run at once) or step: with for_each: (one step for each item)${raw.steps ? ', not both' : ''}`);
  }
  if (raw.step !== undefined && raw.for_each === undefined) error(`the parallel step '${name}' runs step: for each item of a list: add for_each:`);
  if (raw.steps !== undefined && raw.for_each !== undefined) error(`for_each: goes with step: (one step run for each item), not with steps:`, [...path, 'for_each']);
  step.steps = raw.steps?.map((child, index) => readStep(source, child, [...path, 'steps', index], undefined, names, diagnostics));
  step.step = raw.step === undefined ? undefined : readStep(source, raw.step, [...path, 'step'], name, names, diagnostics);
  step.forEach = raw.for_each;
  step.maxConcurrency = raw.max_concurrency;
  return step;
}

function readBudgets(raw: BudgetsYaml | undefined): FlowStepDefinition['budgets'] {
  return { steps: raw?.steps, tokens: raw?.tokens, timeSeconds: raw?.time_seconds, cost: raw?.cost };
}
