/**
 * What the runtime's bundle exports: the command's program, which the `manus` launcher runs, and
 * the public API, which plugins and embedders import as 'manus-runtime'. One bundle for both keeps
 * a single instance of every runtime module in the process; the API is loaded on first use, so a
 * run whose tools need none of it never evaluates it.
 */
import { providePublicApi } from '../runtime/kernel/plugin-loading/public-api.js';

export { runCli } from './program.js';

/**
 * The public API. A `require` rather than `import()` keeps it synchronous, so CommonJS callers can
 * `require('manus-runtime')`; this file exists only to be bundled, where esbuild resolves it.
 */
export function runtimeApi(): typeof import('../runtime/index.js') {
  return require('../runtime/index.js') as typeof import('../runtime/index.js');
}

// Plugins loaded from files import the same API, evaluated when the first of them loads.
providePublicApi(async () => runtimeApi());
