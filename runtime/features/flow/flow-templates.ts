/**
 * Templates in a flow: `{{param}}`, `{{steps.<name>.answer}}`, `{{steps.<name>.answers}}` (a
 * parallel step's, in order), `{{steps.<name>.structured.<path>}}`, `{{steps.<name>.status}}` and,
 * inside a fan-out, `{{item}}` or `{{item.<path>}}`. Text goes in as it is; lists and objects as JSON.
 * As in recipes, there is no logic in templates: a flow reads as the text its agents get.
 */
import { ManusError } from '../../contract/errors.js';
import type { ParameterValue } from '../../config/types.js';
import type { StepResult } from '../../contract/step-kind.js';

export type StepField = 'answer' | 'answers' | 'structured' | 'status';

export type FlowReference =
  | { kind: 'parameter'; name: string }
  | { kind: 'item'; path: string[] }
  | { kind: 'step'; step: string; field: StepField; path: string[] };

export interface FlowPlaceholder {
  text: string;
  offset: number;
  reference?: FlowReference;
  /** Why the text between the braces is no placeholder the language knows. */
  problem?: string;
}

export interface FlowValues {
  parameters: Record<string, ParameterValue>;
  steps: ReadonlyMap<string, StepResult>;
  /** The fan-out item, inside a `for_each` step. */
  item?: unknown;
}

const placeholderPattern = /\{\{([\s\S]*?)\}\}/g;
const namePattern = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const stepFields: readonly StepField[] = ['answer', 'answers', 'structured', 'status'];

const flowTemplateErrorMarker = 'manus.error.FlowTemplateError';
const flowTemplateErrorSymbol = Symbol.for(flowTemplateErrorMarker);

/** A template whose value cannot be had at run time: a structured field the answer lacks, a for_each that is no list. */
export class FlowTemplateError extends ManusError {
  private readonly [flowTemplateErrorSymbol] = true;

  constructor(message: string) {
    super('flow_template_failed', message);
  }

  static isInstance(error: unknown): error is FlowTemplateError {
    return ManusError.hasMarker(error, flowTemplateErrorMarker);
  }
}

export function flowPlaceholders(template: string): FlowPlaceholder[] {
  return [...template.matchAll(placeholderPattern)].map((match) => ({ text: match[0], offset: match.index ?? 0, ...parsePlaceholder(match[1].trim()) }));
}

function parsePlaceholder(inner: string): Pick<FlowPlaceholder, 'reference' | 'problem'> {
  const parts = inner.split('.');
  if (parts.some((part) => part === '')) return { problem: 'it is empty or has an empty part' };
  const [head, ...rest] = parts;
  if (head === 'item') return { reference: { kind: 'item', path: rest } };
  if (head === 'steps') {
    const [step, field, ...path] = rest;
    if (step === undefined || field === undefined) return { problem: 'a step\'s result is {{steps.<name>.answer}}, .answers, .status or .structured.<field>' };
    if (!stepFields.includes(field as StepField)) return { problem: `a step's result has no '${field}': use answer, answers, status or structured` };
    if (path.length > 0 && field !== 'structured') return { problem: `only structured answers have fields: {{steps.${step}.structured.${path.join('.')}}}` };
    return { reference: { kind: 'step', step, field: field as StepField, path } };
  }
  if (rest.length === 0 && namePattern.test(head)) return { reference: { kind: 'parameter', name: head } };
  return { problem: 'a placeholder is {{parameter}}, {{steps.<name>.answer}}, {{steps.<name>.answers}}, {{steps.<name>.structured.<field>}} or {{item}}' };
}

/** The template with every placeholder filled; lists and objects are written as JSON. */
export function renderFlowTemplate(template: string, values: FlowValues): string {
  return template.replace(placeholderPattern, (_whole, inner: string) => asText(valueOf(parsePlaceholder(inner.trim()), inner, values)));
}

/** The value a template of one placeholder stands for, as it is (a list stays a list), for `for_each`. */
export function flowTemplateValue(template: string, values: FlowValues): unknown {
  const placeholders = flowPlaceholders(template);
  if (placeholders.length === 1 && placeholders[0].text === template.trim()) return valueOf(placeholders[0], placeholders[0].text, values);
  return renderFlowTemplate(template, values);
}

function valueOf(parsed: Pick<FlowPlaceholder, 'reference' | 'problem'>, text: string, values: FlowValues): unknown {
  const reference = parsed.reference;
  if (!reference) throw new FlowTemplateError(`{{${text}}} is not a placeholder: ${parsed.problem}`);
  switch (reference.kind) {
    case 'parameter':
      return values.parameters[reference.name];
    case 'item':
      return pathValue(values.item, reference.path, `{{item.${reference.path.join('.')}}}`);
    case 'step': {
      const result = values.steps.get(reference.step);
      if (!result) throw new FlowTemplateError(`the step '${reference.step}' has not run`);
      if (reference.field === 'structured') {
        if (result.structured === undefined) throw new FlowTemplateError(`the step '${reference.step}' gave no structured answer`);
        return pathValue(result.structured, reference.path, `{{steps.${reference.step}.structured.${reference.path.join('.')}}}`);
      }
      if (reference.field === 'answers') return result.answers ?? [];
      return result[reference.field];
    }
  }
}

function pathValue(value: unknown, path: string[], text: string): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !(key in current)) throw new FlowTemplateError(`${text} has no value: there is no '${key}' in ${JSON.stringify(current)?.slice(0, 200)}`);
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  if (value !== null && typeof value === 'object') return JSON.stringify(value, null, 2);
  return String(value);
}
