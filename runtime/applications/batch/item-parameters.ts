/**
 * Every item's parameters checked against the recipe before the batch starts: a key the recipe
 * does not have, or a required parameter an item leaves out, stops the batch with each problem
 * named by the inputs file's line, rather than failing items one by one later.
 */
import { didYouMean } from '../../contract/did-you-mean.js';
import type { Recipe } from '../../config/types.js';
import { UsageError } from '../../contract/errors.js';
import type { BatchInputs } from './batch-inputs.js';

const listedProblems = 20;

export function checkItemParameters(recipe: Recipe, inputs: BatchInputs, fixed: Record<string, string>): void {
  const names = new Set(recipe.parameters.map((parameter) => parameter.name));
  const required = recipe.parameters.filter((parameter) => parameter.required && parameter.default === undefined && fixed[parameter.name] === undefined);
  const problems: string[] = [];
  for (const item of inputs.items) {
    const where = `${inputs.file}:${item.line}`;
    for (const key of Object.keys(item.parameters)) {
      if (!names.has(key)) problems.push(`${where}: the recipe ${recipe.name} has no parameter '${key}'${didYouMean(key, names)}`);
    }
    for (const parameter of required) {
      if (item.parameters[parameter.name] === undefined) problems.push(`${where}: the required parameter '${parameter.name}' is missing (give it in the inputs, or for every item with --param ${parameter.name}=VALUE)`);
    }
  }
  if (problems.length === 0) return;
  const more = problems.length > listedProblems ? `\n  and ${problems.length - listedProblems} more` : '';
  throw new UsageError(`the inputs do not fit the recipe's parameters:\n${problems.slice(0, listedProblems).map((problem) => `  ${problem}`).join('\n')}${more}`);
}
