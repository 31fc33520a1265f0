// Bundles the runtime, the command and the built-in plugins into one CommonJS file, plus a small
// launcher that loads it through V8's code cache (cli/compile-cache.ts) and the public ESM entry.
// Start-up is mostly reading and compiling modules: one file with a code cache skips both.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

/**
 * The bundle is built in a folder of its own beside dist/bundle (or the folder given as the first
 * argument) and then moved in file by file, each rename replacing the old file at once: a `manus`
 * started from this folder while it builds (npm runs `prepare` when a project installs it from its
 * path) finds every file, old or new, and never a missing one.
 */
const target = resolve(process.argv[2] ?? 'dist/bundle');
const outdir = `${target}.building-${process.pid}`;
rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
// The folder goes when the script ends: empty after a build, half-written after a failure that
// leaves dist/bundle as it was.
process.on('exit', () => rmSync(outdir, { recursive: true, force: true }));

// Loaded only by the runs that need them, or shipped with native or WASM parts; all have a
// CommonJS entry, which the bundle requires.
// web-tree-sitter (the shell parser) finds its .wasm, and tree-sitter-bash's, through module
// resolution from the bundle's folder.
const external = ['tiktoken', 'jiti', 'dockerode', 'playwright-core', '@modelcontextprotocol/sdk', 'linkedom', 'turndown', '@mozilla/readability', '@resvg/resvg-js', 'bullmq', 'ioredis', '@pydantic/genai-prices', 'web-tree-sitter', 'tree-sitter-bash', 'smol-toml', 'tar-stream', '@a2a-js/sdk', 'express', 'proxy-chain', '@pondwader/socks5-server'];

/**
 * vega and vega-lite are ES modules with a top-level await (vega-canvas probing for the optional
 * node-canvas), which neither require() nor the bundle (no import() in a vm.Script) can load. Each
 * gets a CommonJS file of its own beside the bundle, built with vega-canvas's build without that
 * probe (charts are drawn as SVG; Vega measures text without a canvas), and required from there
 * only when a chart is drawn, so the bundle every run starts from stays as small as it was.
 */
const vegaLibraries = { vega: './vega.cjs', 'vega-lite': './vega-lite.cjs' };
const vegaCanvasWithoutProbe = {
  name: 'vega-canvas-without-probe',
  setup(context) {
    context.onResolve({ filter: /^vega-canvas$/ }, () => ({ path: resolve('node_modules/vega-canvas/build/vega-canvas.browser.js') }));
  },
};
const vegaOutsideBundle = {
  name: 'vega-outside-bundle',
  setup(context) {
    context.onResolve({ filter: /^vega(-lite)?$/ }, (arguments_) => ({ path: vegaLibraries[arguments_.path], external: true }));
  },
};

/** Plugin files are imported by Node itself, from a file outside the bundle. */
const importOutsideBundle = {
  name: 'import-outside-bundle',
  setup(context) {
    context.onResolve({ filter: /\/load-module-file\.js$/ }, () => ({ path: './load-module-file.cjs', external: true }));
  },
};

/**
 * commander requires node:child_process as it loads, for subcommands that are executables of their
 * own, which `manus` has none of; loading it is several milliseconds of every start. Its one use,
 * `spawn`, loads it when called. The build fails if commander no longer has that line.
 */
const commanderChildProcessOnUse = {
  name: 'commander-child-process-on-use',
  setup(context) {
    context.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, (arguments_) => {
      const eager = "const childProcess = require('node:child_process');";
      const source = readFileSync(arguments_.path, 'utf8');
      if (!source.includes(eager) || /childProcess\.(?!spawn\()/.test(source)) throw new Error(`${arguments_.path}: commander's use of node:child_process changed; revisit commanderChildProcessOnUse`);
      return { contents: source.replace(eager, "const childProcess = { spawn: (...parameters) => require('node:child_process').spawn(...parameters) };"), loader: 'js' };
    });
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

/** The sandbox image's package list goes inline too: its hash names the default image at every start. */
const inlineSandboxImagePackages = {
  name: 'inline-sandbox-image-packages',
  setup(context) {
    context.onLoad({ filter: /runtime[\\/]config[\\/]sandbox-image-packages\.ts$/ }, () => {
      const path = 'runtime/config/sandbox-image-packages.txt';
      return {
        contents: [
          `export const sandboxImagePackagesPath = ${JSON.stringify(path)};`,
          `export const sandboxImagePackagesText = ${JSON.stringify(readFileSync(path, 'utf8'))};`,
        ].join('\n'),
        loader: 'js',
      };
    });
  },
};

/**
 * The built-in plugins: every plugin in plugins/ (a file, or a family folder through its index.ts).
 * The kernel imports none of them; the bundle's entry is generated to register a manifest of them
 * (what each defines, and a loader for its compiled copy), so a run that loads only the plugins its
 * agent uses still knows every name the others define. The plugins are bundled once on their own
 * and loaded here to read their names; the manifest is also written beside the bundle for reading.
 */
async function builtInPluginEntries() {
  const entries = readdirSync('plugins', { withFileTypes: true })
    .filter((entry) => entry.isDirectory() ? existsSync(`plugins/${entry.name}/index.ts`) : entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => entry.isDirectory()
      ? { key: entry.name, path: `./plugins/${entry.name}/index.ts` }
      : { key: entry.name.slice(0, -'.ts'.length), path: `./plugins/${entry.name}` })
    .sort((first, second) => first.key.localeCompare(second.key));
  const contents = [
    ...entries.map((entry, index) => `import plugin${index} from ${JSON.stringify(entry.path)};`),
    `export const names = [${entries.map((_, index) => `plugin${index}`).join(', ')}].map((exported) => [exported].flat().map((tool) => tool?.name ?? (typeof tool?.run === 'function' && typeof tool?.kind === 'string' ? 'step-kind:' + tool.kind : undefined)));`,
  ].join('\n');
  const namesFile = `${outdir}/plugin-names.cjs`;
  await build({ ...commonJs, stdin: { contents, resolveDir: process.cwd(), loader: 'ts' }, outdir: undefined, outfile: namesFile, bundle: true, alias: { 'manus-runtime': './runtime/index.ts' }, external: [...external, 'vega', 'vega-lite'] });
  const { names } = createRequire(import.meta.url)(namesFile);
  rmSync(namesFile);
  return entries.map((entry, index) => {
    if (names[index].length === 0 || names[index].some((name) => typeof name !== 'string')) throw new Error(`${entry.path} exports no named tool, context provider or step kind`);
    return { ...entry, names: names[index] };
  });
}

/** The bundle's entry: the command's own, plus the registration of the built-in plugins. */
function bundleEntry(plugins) {
  return [
    "import { registerBuiltInPlugins } from './runtime/kernel/plugin-loading/built-in-plugins.ts';",
    "export * from './cli/bundle-entry.ts';",
    // Not public API: exported from the bundle so a test can check that the built bundle loads
    // the shell parser, a lazily required package with WASM files beside it. Loaded on the call,
    // so that the bundle's entry does not evaluate the shell rules.
    "export async function decideShellCommand(...parameters) { return (await import('./runtime/services/permissions/shell-command-rules.ts')).decideShellCommand(...parameters); }",
    'registerBuiltInPlugins(new Map([',
    ...plugins.map((plugin) => `  [${JSON.stringify(plugin.key)}, { names: ${JSON.stringify(plugin.names)}, load: () => import(${JSON.stringify(plugin.path)}) }],`),
    ']));',
    '',
  ].join('\n');
}

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

const builtInPlugins = await builtInPluginEntries();
writeFileSync(`${outdir}/plugin-manifest.json`, `${JSON.stringify(Object.fromEntries(builtInPlugins.map((plugin) => [plugin.key, plugin.names])), null, 2)}\n`);
const { metafile } = await build({
  ...commonJs,
  stdin: { contents: bundleEntry(builtInPlugins), resolveDir: process.cwd(), loader: 'ts', sourcefile: 'manus.ts' },
  outdir: undefined,
  outfile: `${outdir}/manus.cjs`,
  bundle: true,
  // A vm.Script has no import() of its own: lazily loaded modules become lazy requires.
  supported: { 'dynamic-import': false },
  alias: { 'manus-runtime': './runtime/index.ts' },
  define: { ...commonJs.define, MANUS_VERSION: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version) },
  external,
  plugins: [importOutsideBundle, inlineConfigValidators, inlineSandboxImagePackages, vegaOutsideBundle, commanderChildProcessOnUse],
  // Smaller source reads faster; names are kept so error classes are still recognised by name
  // and stack traces stay readable. ASCII output lets the launcher read it as latin1.
  // MANUS_BUNDLE_NAMES=1 keeps the source's names, for reading a CPU profile or heap snapshot.
  minifyWhitespace: true,
  minifySyntax: true,
  minifyIdentifiers: process.env.MANUS_BUNDLE_NAMES !== '1',
  keepNames: true,
  charset: 'ascii',
  metafile: true,
});
writeFileSync(`${target}-metafile.json`, JSON.stringify(metafile));
await build({ ...commonJs, entryPoints: { vega: 'node_modules/vega/build/vega.module.js' }, bundle: true, plugins: [vegaCanvasWithoutProbe] });
await build({ ...commonJs, entryPoints: { 'vega-lite': 'node_modules/vega-lite/build/index.js' }, bundle: true, plugins: [vegaOutsideBundle] });
// Compiled on its own, with import() left as it is.
await build({ ...commonJs, entryPoints: { 'load-module-file': 'runtime/kernel/plugin-loading/load-module-file.ts' } });

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
const names = Object.keys(createRequire(import.meta.url)(`${outdir}/manus.cjs`).runtimeApi());
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

/**
 * Moves the new files over the old ones, the launcher last (it names the bundle's hash), then
 * removes what this build no longer writes.
 */
function moveInPlace(from, to) {
  mkdirSync(to, { recursive: true });
  const written = readdirSync(from).sort((first, second) => Number(first === 'main.js') - Number(second === 'main.js'));
  for (const name of written) renameSync(join(from, name), join(to, name));
  for (const name of readdirSync(to)) if (!written.includes(name)) rmSync(join(to, name), { recursive: true, force: true });
}

moveInPlace(outdir, target);
