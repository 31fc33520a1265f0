/**
 * The manifest of the built-in plugins: for each file in plugins/, the tools and context providers
 * it defines and a loader for the copy compiled into the runtime's bundle. A run reads the names
 * from here and loads only the files its agent uses; loading them from the bundle gives them the
 * kernel's own module instances. The build regenerates this table from the compiled plugins
 * (scripts/bundle.mjs), so the shipped manifest always says what the files really define.
 */
export interface BuiltInPlugin {
  /** The names of the tools and context providers the file defines. */
  names: readonly string[];
  load: () => Promise<unknown>;
}

/** Keyed by the file's name without its extension. */
export const builtInPlugins: ReadonlyMap<string, BuiltInPlugin> = new Map<string, BuiltInPlugin>([
  ['ask_human', { names: ['ask_human'], load: () => import('../../plugins/ask_human.js') }],
  ['bash', { names: ['bash'], load: () => import('../../plugins/bash.js') }],
  ['browser_state', { names: ['browser_state'], load: () => import('../../plugins/browser_state.js') }],
  ['browser_use', { names: ['browser_use'], load: () => import('../../plugins/browser_use.js') }],
  ['extract_content', { names: ['extract_content'], load: () => import('../../plugins/extract_content.js') }],
  ['file_search', { names: ['file_search'], load: () => import('../../plugins/file_search.js') }],
  ['list_files', { names: ['list_files'], load: () => import('../../plugins/list_files.js') }],
  ['planning', { names: ['planning'], load: () => import('../../plugins/planning.js') }],
  ['python_execute', { names: ['python_execute'], load: () => import('../../plugins/python_execute.js') }],
  ['str_replace_editor', { names: ['str_replace_editor'], load: () => import('../../plugins/str_replace_editor.js') }],
  ['terminate', { names: ['terminate'], load: () => import('../../plugins/terminate.js') }],
  ['web_fetch', { names: ['web_fetch'], load: () => import('../../plugins/web_fetch.js') }],
  ['web_search', { names: ['web_search'], load: () => import('../../plugins/web_search.js') }],
]);
