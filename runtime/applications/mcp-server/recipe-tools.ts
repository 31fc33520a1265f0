/**
 * A recipe served as one tool: its parameters are the input schema, a call resolves and runs it
 * through the embedding API (so it is recorded in the runs folder like any run), reports each
 * finished step as progress, and stops when the client cancels: the run then ends as interrupted
 * and can be resumed. The result is the run's answer, its structured answer and its id.
 */
import { redactorForPlan } from '../../runs/plan-secrets.js';
import { resolveRecipe, type RecipeOverrides } from '../../runs/recipe/resolve-recipe.js';
import type { Recipe } from '../../config/types.js';
import { InterruptedError } from '../../contract/errors.js';
import { executeRun } from '../../runs/run.js';
import type { JsonSchema } from '../../contract/tool.js';
import { parameterArguments, recipeInputSchema, takesTask, taskArgument } from './recipe-input-schema.js';
import { errorContent, runResultContent } from './result-content.js';
import type { ServedCall, ServedTool } from './served-tool.js';

export interface RecipeToolOptions {
  cwd: string;
  environment: Record<string, string | undefined>;
  runsDirectory?: string;
  /** What the user allowed on the command line, for every run; `sandbox` as `--sandbox`. */
  overrides: Pick<RecipeOverrides, 'trust' | 'sandbox'>;
}

/**
 * Resolves the recipe now, so a broken one stops the server before it starts rather than at a call.
 * The recipe comes back too: its files are protected from the tools served beside it.
 */
export async function loadRecipeTool(file: string, options: RecipeToolOptions): Promise<{ tool: ServedTool; recipe: Recipe }> {
  const plan = await resolveRecipe(file, { cwd: options.cwd, environment: options.environment, overrides: options.overrides, strictParameters: false });
  const { recipe } = plan;
  const response = recipe.response;
  const tool: ServedTool = {
    name: toolName(recipe.name),
    description: recipe.description || `Runs the recipe ${recipe.name}.`,
    inputSchema: recipeInputSchema(recipe),
    outputSchema: isObjectSchema(response) ? response : undefined,
    call: async (input, call) => {
      try {
        return await runRecipe(recipe, input, call, options);
      } catch (error) {
        // A recipe that no longer resolves, or asks for grants nobody gave: the caller is told why.
        return errorContent(error instanceof Error ? error.message : String(error));
      }
    },
  };
  return { tool, recipe };
}

async function runRecipe(recipe: Recipe, input: Record<string, unknown>, call: ServedCall, options: RecipeToolOptions) {
  const prompt = takesTask(recipe) && typeof input[taskArgument] === 'string' ? input[taskArgument] : undefined;
  const plan = await resolveRecipe(recipe.file, {
    cwd: options.cwd,
    environment: options.environment,
    overrides: { ...options.overrides, prompt, parameters: parameterArguments(recipe, input) },
  });
  const interrupt = new AbortController();
  const cancel = () => interrupt.abort(new InterruptedError('cancelled by the MCP client'));
  if (call.signal.aborted) cancel();
  else call.signal.addEventListener('abort', cancel, { once: true });
  const redactor = redactorForPlan(plan, options.environment);
  let finishedSteps = 0;
  try {
    const result = await executeRun(plan, {
      cwd: options.cwd,
      environment: options.environment,
      signal: interrupt.signal,
      runsDirectory: options.runsDirectory,
      interactive: false,
      // No one waits at a worker or behind an MCP client to approve a call: the model is told it was refused.
      unansweredApproval: 'deny',
      answers: [],
      redactor,
      onEvent: (type, data) => {
        if (type === 'step-end' && data.path === undefined) call.progress(Number(data.step), plan.budgets.steps, `step ${String(data.step)} of at most ${plan.budgets.steps}`);
        // A flow reports its own steps as they end.
        const flowSteps = plan.flow?.definition.steps.length;
        if (type === 'flow-step-end' && flowSteps && !String(data.path).includes('/')) {
          finishedSteps += 1;
          call.progress(finishedSteps, flowSteps, `flow step ${String(data.path)}: ${String(data.status)}`);
        }
      },
    });
    return runResultContent(redactor.redactValue(result));
  } finally {
    call.signal.removeEventListener('abort', cancel);
  }
}

/** A recipe's name as a tool name: the characters tool names allow, at most 64 of them. */
function toolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'recipe';
}

function isObjectSchema(schema: JsonSchema | undefined): schema is JsonSchema {
  return schema !== undefined && schema.type === 'object';
}
