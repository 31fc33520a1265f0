/**
 * `import()` for modules outside the runtime's bundle: plugin files. The bundle is compiled in a
 * way that has no `import()` of its own (see cli/compile-cache.ts), so the build swaps this module
 * for a small file that Node loads itself.
 */
export function importModule(specifier: string): Promise<unknown> {
  return import(specifier);
}
