/**
 * The executor of an eval's runs in this process: the embedded pool's rules (at most `concurrency`
 * at once, a provider failure continued from its events after a backoff, the batch budget shared),
 * with each item run on its own model, and through the cache of replies when the eval keeps one.
 */
import type { ChatModel } from '../../contract/model-types.js';
import type { ItemExecutor } from '../batch/batch-run.js';
import { EmbeddedPool, type EmbeddedPoolSettings } from '../batch/embedded-pool.js';
import type { ReplyCache } from './reply-cache.js';
import type { EvalCell } from './eval-matrix.js';

export interface EvalPoolSettings extends Omit<EmbeddedPoolSettings, 'itemRequest'> {
  cellOf(index: number): EvalCell;
  cache?: ReplyCache;
}

/** The embedded pool, with each item run on its own cell's model and through the reply cache. */
export function evalPool(settings: EvalPoolSettings): ItemExecutor {
  const { cellOf, cache, ...pool } = settings;
  return new EmbeddedPool({
    ...pool,
    itemRequest(work) {
      const cell = cellOf(work.index);
      return {
        overrides: cell.model !== undefined ? { model: cell.model } : {},
        ...(cache ? { wrapModel: (model: ChatModel) => cache.wrap(model, cell.model ?? 'default', cell.repeat) } : {}),
        startDetails: { eval: { row: cell.row, model: cell.model ?? 'default', repeat: cell.repeat } },
      };
    },
  });
}
