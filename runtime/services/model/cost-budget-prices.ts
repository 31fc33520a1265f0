/**
 * A cost budget needs a price for every model it pays for. The profile's `price:` gives one; the
 * price table gives one for the models it knows. A model known to neither cannot be held to a cost
 * budget, so the run is refused: at validation when the model id is known then, else at the start
 * of the run, once the endpoint has named its model, before the first request.
 */
import type { ModelProfileConfig } from '../../config/types.js';
import { ConfigError } from '../../contract/errors.js';
import type { PriceBook, TokenPrices } from './pricing.js';

type Environment = Record<string, string | undefined>;

/** The model id and endpoint a profile will use, as far as they are known before connecting. */
export function knownModelOf(profile: ModelProfileConfig, modelOverride: string | undefined, environment: Environment): { model: string; baseUrl?: string } | undefined {
  const model = modelOverride ?? environment.MANUS_MODEL ?? profile.model ?? (profile.provider === 'azure' ? profile.deployment : undefined);
  if (!model) return undefined;
  const baseUrl = profile.baseUrl ?? (profile.provider === 'azure' ? environment.AZURE_OPENAI_ENDPOINT : environment.OPENAI_BASE_URL);
  return { model, baseUrl };
}

/** Why a cost budget cannot be kept for this profile and model, or undefined when it can. */
export async function unpricedModelProblem(profile: ModelProfileConfig, model: { model: string; baseUrl?: string } | undefined): Promise<string | undefined> {
  if (profile.price) return undefined;
  if (model) {
    const { cachedTablePrices } = await import('./price-cache.js');
    const prices: TokenPrices | undefined = await cachedTablePrices(model);
    if (prices) return undefined;
  }
  const which = model ? `model '${model.model}' has no known price` : 'the model is not known before the run connects';
  return `a cost budget needs prices, and ${which}: add price: { input_per_million, output_per_million } to the model profile '${profile.name}'`;
}

/**
 * The check at the start of a run, once the connection has named the model: the loop's prices, or
 * a ConfigError before the first request.
 */
export async function requireCostBudgetPrices(profile: ModelProfileConfig, model: string, prices: PriceBook): Promise<void> {
  if (await prices.pricesFor()) return;
  throw new ConfigError([{
    severity: 'error',
    message: `a cost budget needs prices, and model '${model}' has no known price: add price: { input_per_million, output_per_million } to the model profile '${profile.name}'`,
    location: profile.location,
  }]);
}
