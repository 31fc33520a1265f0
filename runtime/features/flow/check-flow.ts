/**
 * Checks a flow before anything runs: every kind is known and its fields match its schema, every
 * template refers only to declared parameters and to steps that run before it, `{{item}}` appears
 * only in a fan-out's step, and every parameter is used by some step.
 */
import type { Diagnostic } from '../../contract/errors.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import type { RecipeParameter } from '../../config/types.js';
import { locate, locateKey } from '../../config/yaml-source.js';
import { compileJsonSchema } from '../../contract/json-schema.js';
import type { AnyStepKindDefinition } from '../../contract/step-kind.js';
import { isKernelStepKind, type FlowDefinition, type FlowStepDefinition } from '../../config/flow-definition.js';
import { flowPlaceholders } from './flow-templates.js';

export interface FlowCheckInput {
  flow: FlowDefinition;
  parameters: readonly RecipeParameter[];
  stepKinds: ReadonlyMap<string, AnyStepKindDefinition>;
  /** The recipe's workspace template, which may use parameters too. */
  workspace?: string;
}

/** What a step makes available to later ones. */
interface StepShape {
  kind: string;
  structured: boolean;
  parallel: boolean;
}

export function checkFlow(input: FlowCheckInput, diagnostics: Diagnostic[]): void {
  const { flow } = input;
  const used = new Set<string>();
  const available = new Map<string, StepShape>();
  const declared = new Set(input.parameters.map((parameter) => parameter.name));
  const checkTemplate = (template: string, at: Array<string | number>, inFanOut: boolean) => {
    for (const placeholder of flowPlaceholders(template)) {
      const reference = placeholder.reference;
      const error = (message: string) => diagnostics.push({ severity: 'error', message: `${placeholder.text}: ${message}`, location: locate(flow.source, at) });
      if (!reference) {
        error(`${placeholder.problem}`);
        continue;
      }
      if (reference.kind === 'parameter') {
        used.add(reference.name);
        if (!declared.has(reference.name)) error(`the recipe declares no parameter '${reference.name}'${didYouMean(reference.name, declared)}`);
      } else if (reference.kind === 'item') {
        if (!inFanOut) error('{{item}} is the item of a fan-out: it is only known inside the step: of a parallel step with for_each');
      } else {
        const shape = available.get(reference.step);
        if (!shape) {
          error(`no step named '${reference.step}' runs before this one${didYouMean(reference.step, available.keys())}`);
          continue;
        }
        if (reference.field === 'answers' && !shape.parallel) error(`'${reference.step}' is not a parallel step; its result is {{steps.${reference.step}.answer}}`);
        if (reference.field === 'structured' && !shape.structured) {
          error(`'${reference.step}' gives no structured answer: give it a response: schema`);
        }
      }
    }
  };

  const checkStep = (step: FlowStepDefinition, inFanOut: boolean) => {
    if (isKernelStepKind(step.kind)) {
      if (step.prompt !== undefined) checkTemplate(step.prompt, [...step.yamlPath, 'prompt'], inFanOut);
      if (step.forEach !== undefined) checkTemplate(step.forEach, [...step.yamlPath, 'for_each'], inFanOut);
      // Steps run at once cannot see each other; each sees what ran before the parallel step.
      for (const child of step.steps ?? []) checkStep(child, inFanOut);
      if (step.step) checkStep(step.step, true);
      return;
    }
    const kind = input.stepKinds.get(step.kind);
    if (!kind) {
      const known = ['agent', 'parallel', ...input.stepKinds.keys()];
      diagnostics.push({
        severity: 'error',
        message: `no step kind '${step.kind}'${didYouMean(step.kind, known)}; the kinds are ${known.join(', ')} (a plugin may add more)`,
        location: locateKey(flow.source, step.yamlPath, 'kind'),
      });
      return;
    }
    checkFields(step, kind, input, diagnostics);
    for (const field of kind.templateFields ?? []) {
      const value = fieldValue(step.fields, field);
      if (typeof value === 'string') checkTemplate(value, [...step.yamlPath, ...field.split('.')], inFanOut);
    }
  };

  const makeAvailable = (step: FlowStepDefinition) => {
    available.set(step.name, {
      kind: step.kind,
      structured: step.kind === 'agent' ? step.response !== undefined : step.kind !== 'parallel',
      parallel: step.kind === 'parallel',
    });
    for (const child of step.steps ?? []) makeAvailable(child);
  };

  for (const step of flow.steps) {
    checkStep(step, false);
    makeAvailable(step);
  }
  if (flow.answer !== undefined) checkTemplate(flow.answer, ['answer'], false);
  for (const placeholder of flowPlaceholders(input.workspace ?? '')) {
    if (placeholder.reference?.kind === 'parameter') used.add(placeholder.reference.name);
  }
  for (const parameter of input.parameters) {
    if (used.has(parameter.name)) continue;
    diagnostics.push({
      severity: 'error',
      message: `parameter '${parameter.name}' is never used by a step of the flow (add {{${parameter.name}}} to a step's prompt, or remove it)`,
      location: parameter.location,
    });
  }
}

/** A plugin kind's fields against its schema: unknown fields get a "did you mean", the rest ajv's words. */
function checkFields(step: FlowStepDefinition, kind: AnyStepKindDefinition, input: FlowCheckInput, diagnostics: Diagnostic[]): void {
  const known = Object.keys((kind.fields.properties ?? {}) as Record<string, unknown>);
  for (const key of Object.keys(step.fields)) {
    if (known.includes(key)) continue;
    diagnostics.push({
      severity: 'error',
      message: `a ${step.kind} step has no field '${key}'${didYouMean(key, known)}; its fields are ${known.join(', ')}`,
      location: locateKey(input.flow.source, step.yamlPath, key),
    });
  }
  const validate = compileJsonSchema({ ...kind.fields, additionalProperties: true });
  if (validate(structuredClone(step.fields))) return;
  for (const error of validate.errors ?? []) {
    const path = error.instancePath.split('/').slice(1);
    const where = path.length > 0 ? path.join('.') : 'the step';
    diagnostics.push({
      severity: 'error',
      message: `${step.kind} step '${step.name}': ${where} ${error.message ?? 'is not valid'}`,
      location: locate(input.flow.source, [...step.yamlPath, ...path]),
    });
  }
}

/** The value at a dotted path of a step's fields. */
export function fieldValue(fields: Record<string, unknown>, dottedPath: string): unknown {
  let current: unknown = fields;
  for (const key of dottedPath.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
