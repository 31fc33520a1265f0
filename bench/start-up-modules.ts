/**
 * What the bundle evaluates when a plain `manus run` starts, read from the metafile the build
 * writes beside the bundle (scripts/bundle.mjs). A module counts when the bundle's entry or the
 * run command reaches it through static imports: `import` statements, and `require` calls inside
 * packages (a package's CommonJS requires run as it loads). The runtime's own `import()` calls, and
 * its one `require` (the public API, loaded on first use), are where lazy loading starts, so they
 * are not followed. Packages left outside the bundle are not counted.
 */
import { existsSync, readFileSync } from 'node:fs';

interface Metafile {
  inputs: Record<string, { imports: Array<{ path: string; kind: string; external?: boolean }> }>;
  outputs: Record<string, { bytes: number; entryPoint?: string; inputs: Record<string, { bytesInOutput: number }> }>;
}

export interface StartUpModules {
  /** Modules evaluated at start-up, and their bytes in the bundle. */
  count: number;
  bytes: number;
  /** The whole bundle, for scale. */
  bundleModules: number;
  bundleBytes: number;
  /** Start-up bytes by package (node_modules) or by folder of the runtime, biggest first. */
  groups: Array<{ name: string; bytes: number; modules: number }>;
  /** The biggest modules, with the module that first pulled each in. */
  biggest: Array<{ path: string; bytes: number; importedBy?: string }>;
}

/** The command's own module, reached from the program through `import()` when the command runs. */
const commandModules: Record<string, string> = { run: 'cli/run-command.ts' };

export function startUpModules(metafileFile: string, command = 'run'): StartUpModules | undefined {
  if (!existsSync(metafileFile)) return undefined;
  const metafile = JSON.parse(readFileSync(metafileFile, 'utf8')) as Metafile;
  const [bundle] = Object.values(metafile.outputs).filter((output) => output.entryPoint !== undefined || Object.keys(output.inputs).length > 0);
  const entry = Object.keys(metafile.inputs).find((path) => path === 'manus.ts') ?? Object.keys(bundle.inputs)[0];
  const importedBy = new Map<string, string | undefined>();
  const queue = [entry, commandModules[command]].filter((path): path is string => path !== undefined && metafile.inputs[path] !== undefined);
  for (const root of queue) importedBy.set(root, undefined);
  while (queue.length > 0) {
    const path = queue.shift()!;
    for (const imported of metafile.inputs[path]?.imports ?? []) {
      if (imported.external || imported.kind === 'dynamic-import') continue;
      if (imported.kind === 'require-call' && !insidePackage(path)) continue;
      if (importedBy.has(imported.path)) continue;
      importedBy.set(imported.path, path);
      queue.push(imported.path);
    }
  }
  const sizes = [...importedBy.keys()].map((path) => ({ path, bytes: bundle.inputs[path]?.bytesInOutput ?? 0, importedBy: importedBy.get(path) }));
  const groups = new Map<string, { bytes: number; modules: number }>();
  for (const { path, bytes } of sizes) {
    const name = groupOf(path);
    const group = groups.get(name) ?? { bytes: 0, modules: 0 };
    group.bytes += bytes;
    group.modules += 1;
    groups.set(name, group);
  }
  return {
    count: sizes.length,
    bytes: sizes.reduce((sum, { bytes }) => sum + bytes, 0),
    bundleModules: Object.keys(bundle.inputs).length,
    bundleBytes: bundle.bytes,
    groups: [...groups].map(([name, group]) => ({ name, ...group })).sort((first, second) => second.bytes - first.bytes),
    biggest: sizes.sort((first, second) => second.bytes - first.bytes),
  };
}

function insidePackage(path: string): boolean {
  return path.includes('node_modules/');
}

/** A package's name, or the runtime folder two levels down (`runtime/services/sandbox`). */
function groupOf(path: string): string {
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (packageMatch) return packageMatch[1];
  return path.split('/').slice(0, path.startsWith('runtime/') ? 3 : 2).join('/');
}

export function formatStartUpModules(modules: StartUpModules | undefined, shown = 12): string[] {
  if (modules === undefined) return ['  start-up modules: no metafile beside the bundle (built by an older scripts/bundle.mjs)'];
  const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  return [
    `  start-up modules of a plain \`manus run\`: ${modules.count} of ${modules.bundleModules}, ${kilobytes(modules.bytes)} of the bundle's ${kilobytes(modules.bundleBytes)}`,
    `    by package or folder: ${modules.groups.slice(0, shown).map((group) => `${group.name} ${kilobytes(group.bytes)}`).join(', ')}`,
    `    biggest: ${modules.biggest.slice(0, shown).map((module) => `${module.path} ${kilobytes(module.bytes)}`).join(', ')}`,
  ];
}
