/**
 * The shape of the runtime, checked by test/architecture.test.ts and drawn into
 * docs/architecture.md by `npm run architecture:graph`.
 *
 * runtime/ is a stack of layers. A layer's files import only files of the layers below it (and
 * of their own layer); nothing imports in a circle, type-only imports included; a plugin imports
 * only the public API, 'manus-runtime', and files of its own folder.
 */

/** Lowest first. `cli/` stands above every layer; `runtime/index.ts`, the public API, above all but `cli/`. */
const layers = ['contract', 'config', 'services', 'kernel', 'features', 'runs', 'applications'];

const layerRules = layers.map((layer, index) => ({
  name: `${layer}-imports-only-below`,
  comment: `runtime/${layer}/ may import only ${layers.slice(0, index).map((below) => `runtime/${below}/`).join(', ') || 'its own files'}`,
  severity: 'error',
  from: { path: `^runtime/${layer}/` },
  to: {
    path: ['^runtime/', '^cli/', '^plugins/'],
    pathNot: [...layers.slice(0, index + 1).map((allowed) => `^runtime/${allowed}/`)],
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no file reaches itself again through its imports, type-only and dynamic imports included',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'runtime-has-no-loose-files',
      comment: 'every runtime file belongs to a layer folder; runtime/index.ts, the public API, is the one file at the root',
      severity: 'error',
      from: { path: '^runtime/[^/]+$', pathNot: '^runtime/index\\.ts$' },
      to: {},
    },
    {
      name: 'runtime-imports-no-command-or-plugin',
      comment: 'the runtime knows neither the command nor any plugin',
      severity: 'error',
      from: { path: '^runtime/' },
      to: { path: ['^cli/', '^plugins/'] },
    },
    {
      name: 'plugins-import-only-the-public-api',
      comment: "a plugin imports the runtime only as 'manus-runtime' (runtime/index.ts)",
      severity: 'error',
      from: { path: '^plugins/' },
      to: { path: ['^runtime/', '^cli/'], pathNot: '^runtime/index\\.ts$' },
    },
    {
      name: 'plugin-families-import-only-their-own-folder',
      comment: "a plugin family shares code with another through the public API or by calling its tools (a tool's `calls`), not by a path into its folder",
      severity: 'error',
      from: { path: '^plugins/([^/]+)/' },
      to: { path: '^plugins/', pathNot: '^plugins/$1/' },
    },
    {
      name: 'plugin-files-import-no-other-plugin',
      comment: 'a one-file plugin imports no other plugin',
      severity: 'error',
      from: { path: '^plugins/[^/]+\\.ts$' },
      to: { path: '^plugins/' },
    },
  ],
  options: {
    includeOnly: '^(runtime|plugins|cli)/',
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
    reporterOptions: {
      mermaid: { minify: false },
    },
  },
};
