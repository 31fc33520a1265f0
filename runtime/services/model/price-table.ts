/**
 * Prices from `@pydantic/genai-prices`, a maintained table of providers' models with their cached
 * input prices. Its data ships inside the package and is never updated from the network here
 * (the package fetches only when `updatePrices` is called, which the runtime never does), so a
 * run's cost does not depend on the day's download.
 */
import type { TokenPrices } from '../../contract/token-usage.js';

/** What a price is asked for: the model id the endpoint was sent, and the endpoint. */
export interface PricedModel {
  model: string;
  baseUrl?: string;
}

type PriceLibrary = typeof import('@pydantic/genai-prices');

let library: Promise<PriceLibrary> | undefined;

// Prices are read at a small request, so tiered prices (cheaper or dearer past 128k or 200k
// prompt tokens) give their base tier, the one ordinary requests pay.
const sampleTokens = 1000;

export async function tablePrices({ model, baseUrl }: PricedModel): Promise<TokenPrices | undefined> {
  const { calcPrice, findProvider } = await (library ??= import('@pydantic/genai-prices'));
  // A provider known by its endpoint prices its own models; an endpoint the table does not know
  // (a gateway, a local server) is priced by the model id alone, when the table recognises it.
  const provider = baseUrl ? findProvider({ providerApiUrl: baseUrl }) : undefined;
  const options = provider ? { provider } : {};
  const perMillion = (usage: Record<string, number>, part: 'input_price' | 'output_price'): number | undefined => {
    try {
      const price = calcPrice(usage, model, options);
      return price ? (price[part] * 1_000_000) / sampleTokens : undefined;
    } catch {
      return undefined;
    }
  };
  const input = perMillion({ input_tokens: sampleTokens }, 'input_price');
  const output = perMillion({ output_tokens: sampleTokens }, 'output_price');
  if (input === undefined || output === undefined) return undefined;
  const cached = perMillion({ input_tokens: sampleTokens, cache_read_tokens: sampleTokens }, 'input_price');
  const written = perMillion({ input_tokens: sampleTokens, cache_write_tokens: sampleTokens }, 'input_price');
  return {
    inputPerMillion: input,
    outputPerMillion: output,
    ...(cached !== undefined ? { cachedInputPerMillion: cached } : {}),
    ...(written !== undefined ? { cacheWriteInputPerMillion: written } : {}),
  };
}
