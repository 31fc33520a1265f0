/**
 * The protected paths of a served connection: a run's, plus what the server itself loads. With
 * `--workspace .` the plugin folders and recipes being served lie inside the workspace, where a
 * served file tool or a command on the host could rewrite them, and the next start of the server
 * would load what the client wrote. So they are protected as a run protects its own recipe. And a
 * workspace elsewhere is a project where the user later runs manus: what a run there would load
 * (its agents.yaml, plugins, packages) is protected as the current folder's is.
 */
import { resolve } from 'node:path';
import type { AgentsConfig, Recipe } from '../../config/types.js';
import { protectedPathsFor, type ProtectedPathPlaces } from '../../runs/protected-path-list.js';
import { canonicalPath, type ProtectedPath } from '../../services/protected-paths/protected-paths.js';

export interface ServedSources {
  /** The extra plugin folders given with `--plugins`. */
  pluginFolders: readonly string[];
  /** The recipes served as tools: their files, prompt files and plugin folders. */
  recipes: readonly Recipe[];
}

export function servedProtectedPaths(agentsConfig: AgentsConfig, served: ServedSources, places: ProtectedPathPlaces): ProtectedPath[] {
  const entries = [
    ...protectedPathsFor({ agentsConfig }, places),
    ...(places.workspace === places.cwd ? [] : protectedPathsFor({ agentsConfig }, { ...places, cwd: places.workspace })),
    ...served.recipes.flatMap((recipe) => protectedPathsFor({ agentsConfig, recipe }, places)),
    ...served.pluginFolders.map((folder): ProtectedPath => ({
      path: canonicalPath(resolve(places.cwd, folder)),
      kind: 'folder',
      reason: 'manus mcp serve loads plugins from it',
      watched: true,
    })),
  ];
  const byPath = new Map<string, ProtectedPath>();
  for (const entry of entries) {
    const earlier = byPath.get(entry.path);
    if (!earlier || (entry.watched && !earlier.watched)) byPath.set(entry.path, entry);
  }
  return [...byPath.values()];
}
