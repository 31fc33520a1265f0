/** The runtime's cache folder: start-up code caches, and the run definitions a worker materialises. */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function cacheFolder(): string | undefined {
  if (process.env.MANUS_CACHE_DIR) return process.env.MANUS_CACHE_DIR;
  if (process.env.XDG_CACHE_HOME) return join(process.env.XDG_CACHE_HOME, 'manus-runtime');
  try {
    return join(homedir(), '.cache', 'manus-runtime');
  } catch {
    // A user with no home (an arbitrary uid in a container, HOME unset).
    return undefined;
  }
}
