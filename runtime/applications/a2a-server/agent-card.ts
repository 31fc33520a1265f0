/**
 * The agent card of `manus a2a serve`: one skill per served recipe, made from its description and
 * parameters, so a client's model can tell what to send. A card has no schema for a skill's input,
 * so the parameters are written into the skill's description; the input modes say a data part of
 * arguments or a text task is taken.
 */
import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import type { Recipe, RecipeParameter } from '../../config/types.js';
import { takesTask, taskArgument } from '../mcp-server/recipe-input-schema.js';

export interface ServedRecipe {
  /** The skill's id: the recipe's name in the characters ids allow. */
  id: string;
  recipe: Recipe;
}

export interface AgentCardOptions {
  /** Where the JSON-RPC endpoint is reached. */
  url: string;
  version: string;
  /** Requests must carry a bearer token: the card says so. */
  bearer: boolean;
}

export function agentCard(served: readonly ServedRecipe[], options: AgentCardOptions): AgentCard {
  const single = served.length === 1 ? served[0].recipe : undefined;
  return {
    name: single ? single.name : 'manus recipes',
    description: single?.description || `Runs the recipes ${served.map((each) => each.recipe.name).join(', ')} with manus-runtime; choose one with the message's metadata "skill".`,
    supportedInterfaces: [{ url: options.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: options.version,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: options.bearer
      ? { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { scheme: 'Bearer', bearerFormat: '', description: 'The token the server was started with (--token-env).' } } } }
      : {},
    securityRequirements: options.bearer ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['text/plain', 'application/json', 'application/octet-stream'],
    skills: served.map(skillOf),
    signatures: [],
  };
}

function skillOf({ id, recipe }: ServedRecipe): AgentSkill {
  const parameters = recipe.parameters.map(describeParameter);
  if (takesTask(recipe)) parameters.push(`${taskArgument} (string, required): the task for the agent; a text part gives it too`);
  const how = parameters.length === 0
    ? 'It takes no arguments.'
    : `Arguments, as a data part holding an object:\n${parameters.map((line) => `- ${line}`).join('\n')}`;
  return {
    id,
    name: recipe.name,
    description: `${recipe.description || `Runs the recipe ${recipe.name}.`}\n${how}`,
    tags: ['manus-recipe'],
    examples: [],
    inputModes: ['application/json', 'text/plain'],
    outputModes: ['text/plain', 'application/json', 'application/octet-stream'],
    securityRequirements: [],
  };
}

function describeParameter(parameter: RecipeParameter): string {
  const type = parameter.type === 'enum' ? (parameter.values ?? []).join('|') : parameter.type === 'list' ? 'list of strings' : parameter.type;
  const needed = parameter.required && parameter.default === undefined ? ', required' : parameter.default !== undefined ? `, default ${JSON.stringify(parameter.default)}` : '';
  return `${parameter.name} (${type}${needed})${parameter.description ? `: ${parameter.description}` : ''}`;
}
