/**
 * The built-in plugins, compiled into the runtime's bundle with it. Loading them from here gives
 * them the kernel's own module instances and spares a run a second module graph per plugin; the
 * files in plugins/ stay the source, and one edited since the build is loaded from that source.
 */
export const builtInPlugins: ReadonlyMap<string, () => Promise<unknown>> = new Map<string, () => Promise<unknown>>([
  ['ask_human', () => import('../../plugins/ask_human.js')],
  ['bash', () => import('../../plugins/bash.js')],
  ['browser_state', () => import('../../plugins/browser_state.js')],
  ['browser_use', () => import('../../plugins/browser_use.js')],
  ['extract_content', () => import('../../plugins/extract_content.js')],
  ['file_search', () => import('../../plugins/file_search.js')],
  ['list_files', () => import('../../plugins/list_files.js')],
  ['planning', () => import('../../plugins/planning.js')],
  ['python_execute', () => import('../../plugins/python_execute.js')],
  ['str_replace_editor', () => import('../../plugins/str_replace_editor.js')],
  ['terminate', () => import('../../plugins/terminate.js')],
  ['web_fetch', () => import('../../plugins/web_fetch.js')],
  ['web_search', () => import('../../plugins/web_search.js')],
]);
