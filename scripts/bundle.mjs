// Bundles the runtime, the command and the built-in plugins into one CommonJS file, plus a small
// launcher that loads it through V8's code cache (cli/compile-cache.ts) and the public ESM entry.
// Start-up is mostly reading and compiling modules: one file with a code cache skips both.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const outdir = 'dist/bundle';
rmSync(outdir, { recursive: true, force: true });

// Loaded only by the runs that need them, or shipped with native or WASM parts; all have a
// CommonJS entry, which the bundle requires.
const external = ['tiktoken', 'jiti', 'dockerode', 'playwright-core', '@modelcontextprotocol/sdk', 'linkedom', 'turndown', '@mozilla/readability'];

/** Plugin files are imported by Node itself, from a file outside the bundle. */
const importOutsideBundle = {
  name: 'import-outside-bundle',
  setup(context) {
    context.onResolve({ filter: /\/load-module-file\.js$/ }, () => ({ path: './load-module-file.cjs', external: true }));
  },
};

/** The config validators compiled by scripts/compile-schemas.mjs go inline, into the code cache. */
const inlineConfigValidators = {
  name: 'inline-config-validators',
  setup(context) {
    context.onLoad({ filter: /runtime[\\/]config[\\/]prebuilt-validators\.ts$/ }, () => ({
      contents: [
        "export const prebuiltValidatorsFile = 'dist/schemas/config-validators.cjs';",
        "export function loadPrebuiltValidators() { return require('./dist/schemas/config-validators.cjs'); }",
      ].join('\n'),
      resolveDir: process.cwd(),
      loader: 'js',
    }));
  },
};

/**
 * The manifest of the built-in plugins, generated from what each file really exports, so a run that
 * loads only the plugins its agent uses still knows every name the others define. The plugins are
 * bundled once on their own and loaded here to read their names.
 */
async function builtInPluginManifest() {
  const files = readdirSync('plugins').filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts')).sort();
  const contents = [
    ...files.map((file, index) => `import plugin${index} from './plugins/${file}';`),
    `export const names = [${files.map((_, index) => `plugin${index}`).join(', ')}].map((exported) => [exported].flat().map((tool) => tool?.name));`,
  ].join('\n');
  const namesFile = `${outdir}/plugin-names.cjs`;
  await build({ ...commonJs, stdin: { contents, resolveDir: process.cwd(), loader: 'ts' }, outdir: undefined, outfile: namesFile, bundle: true, alias: { 'manus-runtime': './runtime/index.ts' }, external });
  const { names } = createRequire(import.meta.url)(`./../${namesFile}`);
  rmSync(namesFile);
  const entries = files.map((file, index) => {
    if (names[index].length === 0 || names[index].some((name) => typeof name !== 'string')) throw new Error(`plugins/${file} exports no named tool or context provider`);
    return `  [${JSON.stringify(file.slice(0, -'.ts'.length))}, { names: ${JSON.stringify(names[index])}, load: () => import(${JSON.stringify(`./plugins/${file}`)}) }],`;
  });
  return ['export const builtInPlugins = new Map([', ...entries, ']);', ''].join('\n');
}

const generatedPluginManifest = {
  name: 'generated-plugin-manifest',
  setup(context) {
    context.onLoad({ filter: /runtime[\\/]plugins[\\/]built-in-plugins\.ts$/ }, () => ({
      contents: pluginManifest,
      resolveDir: process.cwd(),
      loader: 'js',
    }));
  },
};

/** What the three CommonJS outputs share; `import.meta.url` becomes the output file's own URL. */
const commonJs = {
  outdir,
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  define: { 'import.meta.url': '__manusFileUrl' },
  // The directive first: esbuild's own comes after the banner, where it would not count.
  banner: { js: '"use strict";\nconst __manusFileUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
};

const pluginManifest = await builtInPluginManifest();
await build({
  ...commonJs,
  entryPoints: { manus: 'cli/bundle-entry.ts' },
  bundle: true,
  // A vm.Script has no import() of its own: lazily loaded modules become lazy requires.
  supported: { 'dynamic-import': false },
  alias: { 'manus-runtime': './runtime/index.ts' },
  define: { ...commonJs.define, MANUS_VERSION: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version) },
  external,
  plugins: [importOutsideBundle, inlineConfigValidators, generatedPluginManifest],
  // Smaller source reads faster; names are kept so error classes are still recognised by name
  // and stack traces stay readable. ASCII output lets the launcher read it as latin1.
  minify: true,
  keepNames: true,
  charset: 'ascii',
});
// Compiled on its own, with import() left as it is.
await build({ ...commonJs, entryPoints: { 'load-module-file': 'runtime/load-module-file.ts' } });

const bundle = readFileSync(`${outdir}/manus.cjs`);
if (/[^\x00-\x7f]/.test(bundle.toString('latin1'))) throw new Error('the bundle must be ASCII: the launcher reads it as latin1');
const bundleHash = createHash('sha256').update(bundle).digest('hex').slice(0, 16);

// CommonJS as well: a CommonJS entry point spares Node setting up its ESM loader at start-up. It
// keeps the name main.js, which installed links to the command point at; the package.json below
// makes .js files in this folder CommonJS.
writeFileSync(`${outdir}/package.json`, `${JSON.stringify({ type: 'commonjs' })}\n`);
await build({
  ...commonJs,
  outExtension: { '.js': '.js' },
  entryPoints: { main: 'cli/main.ts' },
  bundle: true,
  define: { ...commonJs.define, MANUS_BUNDLE_HASH: JSON.stringify(bundleHash) },
});

// The public entries for 'manus-runtime', ES module and CommonJS: the bundle's own API, so plugins
// share the command's module instances.
const names = Object.keys(createRequire(import.meta.url)(`./../${outdir}/manus.cjs`).runtimeApi());
writeFileSync(
  `${outdir}/index.mjs`,
  [
    "import { createRequire } from 'node:module';",
    "const runtime = createRequire(import.meta.url)('./manus.cjs').runtimeApi();",
    `export const { ${names.join(', ')} } = runtime;`,
    '',
  ].join('\n'),
);
writeFileSync(`${outdir}/index.cjs`, '"use strict";\nmodule.exports = require("./manus.cjs").runtimeApi();\n');
