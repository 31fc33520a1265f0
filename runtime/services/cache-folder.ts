/** The runtime's cache folder: start-up code caches, compiled plugins, and the run definitions a worker materialises. */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function cacheFolder(environment: Record<string, string | undefined> = process.env): string | undefined {
  if (environment.MANUS_CACHE_DIR) return environment.MANUS_CACHE_DIR;
  if (environment.XDG_CACHE_HOME) return join(environment.XDG_CACHE_HOME, 'manus-runtime');
  try {
    return join(environment.HOME ?? homedir(), '.cache', 'manus-runtime');
  } catch {
    // A user with no home (an arbitrary uid in a container, HOME unset).
    return undefined;
  }
}
