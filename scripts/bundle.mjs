// Bundles the command and the runtime's public entry into a few files with shared chunks: Node
// loads one file far faster than hundreds (start-up is mostly module loading), and plugins that
// import 'manus-runtime' share the command's module instances.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('dist/bundle', { recursive: true, force: true });

await build({
  entryPoints: { main: 'cli/main.ts', index: 'runtime/index.ts' },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Smaller source parses faster, and start-up is mostly parsing; names are kept so error classes
  // are still recognised by name and stack traces stay readable.
  minify: true,
  keepNames: true,
  // Loaded lazily and only by the runs that need them, or shipped with native or WASM parts.
  external: ['tiktoken', 'jiti', 'dockerode', 'playwright-core', '@modelcontextprotocol/sdk', 'linkedom', 'turndown', '@mozilla/readability'],
  banner: { js: "import { createRequire as __manusCreateRequire } from 'node:module'; const require = __manusCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
