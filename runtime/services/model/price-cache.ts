/**
 * The prices looked up in the table, remembered in the user's cache folder per endpoint and model,
 * so a later run of the same model need not load the table (830 KB of code and data, about 40 ms
 * and 7 MB) at all. The file is named after the table's pinned version: a new table starts afresh.
 * A file that cannot be read or written only costs the lookup.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TokenPrices } from '../../contract/token-usage.js';
import { packageRoot } from '../../config/package-root.js';
import { cacheFolder } from '../cache-folder.js';
import type { PricedModel } from './price-table.js';

type CachedPrices = Record<string, TokenPrices | null>;

const tablePackage = '@pydantic/genai-prices';

function cacheFile(): string | undefined {
  const folder = cacheFolder();
  if (!folder) return undefined;
  try {
    const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const version = manifest.dependencies?.[tablePackage];
    return version ? join(folder, `prices-${version}.json`) : undefined;
  } catch {
    return undefined;
  }
}

function readCache(file: string): CachedPrices {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as CachedPrices) : {};
  } catch {
    return {};
  }
}

/** The table knows a provider by its endpoint's host: a port or path (a local gateway's) changes nothing. */
function keyOf({ model, baseUrl }: PricedModel): string {
  let host = '';
  try {
    host = baseUrl ? new URL(baseUrl).hostname : '';
  } catch {
    host = baseUrl ?? '';
  }
  return `${host} ${model}`;
}

/** The table's prices for the model, from the cache when an earlier run looked them up. */
export async function cachedTablePrices(model: PricedModel): Promise<TokenPrices | undefined> {
  const file = cacheFile();
  const key = keyOf(model);
  if (file) {
    const cached = readCache(file);
    if (key in cached) return cached[key] ?? undefined;
  }
  const { tablePrices } = await import('./price-table.js');
  const prices = await tablePrices(model);
  if (file) {
    try {
      mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
      const temporary = `${file}.${process.pid}`;
      writeFileSync(temporary, JSON.stringify({ ...readCache(file), [key]: prices ?? null }), { mode: 0o600 });
      renameSync(temporary, file);
    } catch {
      // A cache that cannot be written only costs the lookup next time.
    }
  }
  return prices;
}
