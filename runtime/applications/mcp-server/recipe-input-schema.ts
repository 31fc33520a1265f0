/** A recipe's parameters as the JSON Schema of the tool that runs it: types, enums, defaults, what is required. */
import type { Recipe, RecipeParameter } from '../../config/types.js';
import type { JsonSchema } from '../../contract/tool.js';

/** The argument that carries the task when the recipe has no prompt of its own. */
export const taskArgument = 'prompt';

export function recipeInputSchema(recipe: Recipe): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const parameter of recipe.parameters) {
    properties[parameter.name] = parameterSchema(parameter);
    if (parameter.required && parameter.default === undefined) required.push(parameter.name);
  }
  if (takesTask(recipe) && !(taskArgument in properties)) {
    properties[taskArgument] = { type: 'string', description: 'The task for the agent.' };
    required.push(taskArgument);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/** A recipe with one agent and no prompt takes its task as an argument; a flow's steps have theirs. */
export function takesTask(recipe: Recipe): boolean {
  return recipe.promptTemplate === undefined && recipe.flow === undefined;
}

function parameterSchema(parameter: RecipeParameter): JsonSchema {
  const schema: JsonSchema = parameter.type === 'enum'
    ? { type: 'string', enum: parameter.values ?? [] }
    : parameter.type === 'list' ? { type: 'array', items: { type: 'string' } } : { type: parameter.type };
  if (parameter.description) schema.description = parameter.description;
  if (parameter.default !== undefined) schema.default = parameter.default;
  return schema;
}

/** Arguments as the text a `--param` would give; the recipe's own conversion then applies. */
export function parameterArguments(recipe: Recipe, input: Record<string, unknown>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const parameter of recipe.parameters) {
    const value = input[parameter.name];
    // A list goes as JSON, so items that hold commas stay whole.
    if (value !== undefined) values[parameter.name] = Array.isArray(value) ? JSON.stringify(value.map(String)) : String(value);
  }
  return values;
}
