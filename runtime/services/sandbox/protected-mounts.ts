/**
 * What a sandbox mounts read-only over its writable workspace: every protected path inside it
 * that exists, and, for a protected folder that does not exist yet (`plugins/`, `.git/hooks`),
 * an empty read-only folder put in its place for as long as a command runs, so `mkdir -p plugins`
 * finds it there and cannot fill it. A mount point cannot be renamed or removed from inside the
 * sandbox (EBUSY), and a hard link cannot cross into it (EXDEV).
 *
 * A protected folder with exceptions (a repository's folder, whose objects, refs and index git
 * writes) is bound writable onto itself, so it cannot be renamed or removed, and each of its
 * other entries is mounted read-only.
 *
 * A missing protected file (agents.yaml, .mcp.json) gets no placeholder: an empty file left
 * behind by a killed runtime would break the next run. Nor does a missing editor folder (.vscode,
 * .idea, .devcontainer), which would show in every listing. Creating one is caught by the check
 * after the command, which removes it and stops the run.
 */
import { readdirSync } from 'node:fs';
import { lstat, mkdir, rmdir } from 'node:fs/promises';
import type { ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import { basename, dirname, join } from 'node:path';
import { matchesEntryName } from '../protected-paths/git-repositories.js';
import { editorControlNames, isInside } from '../workspace-paths.js';

export interface ProtectedMountSet {
  /**
   * Folders bound writable onto themselves before the read-only mounts: a repository's folder,
   * which git writes to but a command must not rename or remove (a mount point cannot be).
   */
  pinned: string[];
  /** Host paths to mount read-only at the same place, outermost first. */
  readOnly: string[];
  /** Removes the placeholders this command needed once no other command still uses them. */
  release(): Promise<void>;
}

export class ProtectedMounts {
  /** Placeholder folder to the number of running commands that mount it. */
  private readonly users = new Map<string, number>();

  constructor(
    private readonly workspace: string,
    private readonly protectedPaths: ProtectedPathGuard | undefined,
  ) {}

  /** Existing protected paths inside the workspace, for sandboxes that mount once (docker). */
  async existing(): Promise<string[]> {
    const paths: string[] = [];
    for (const path of this.candidates()) {
      const information = await lstat(path).catch(() => undefined);
      if (information && !information.isSymbolicLink()) paths.push(path);
    }
    return paths;
  }

  async acquire(): Promise<ProtectedMountSet> {
    const readOnly: string[] = [];
    const placeholders: string[] = [];
    for (const path of this.candidates()) {
      const information = await lstat(path).catch(() => undefined);
      if (information) {
        // A dangling link's target is outside the protected list; the check after the command covers it.
        if (!information.isSymbolicLink()) readOnly.push(path);
        if (this.users.has(path)) {
          this.users.set(path, (this.users.get(path) ?? 0) + 1);
          placeholders.push(path);
        }
        continue;
      }
      if (!this.isMissingFolder(path) || !(await lstat(dirname(path)).catch(() => undefined))?.isDirectory()) continue;
      this.protectedPaths?.placeholders.add(path);
      try {
        await mkdir(path, { mode: 0o555 });
      } catch {
        this.protectedPaths?.placeholders.delete(path);
        continue;
      }
      this.users.set(path, 1);
      placeholders.push(path);
      readOnly.push(path);
    }
    let released = false;
    return {
      pinned: await this.pinned(),
      readOnly: readOnly.sort((left, right) => left.length - right.length),
      release: async () => {
        if (released) return;
        released = true;
        for (const path of placeholders) await this.releasePlaceholder(path);
      },
    };
  }

  private async releasePlaceholder(path: string): Promise<void> {
    const remaining = (this.users.get(path) ?? 1) - 1;
    if (remaining > 0) {
      this.users.set(path, remaining);
      return;
    }
    this.users.delete(path);
    // Nothing can have been written into it; should it hold something, it is no longer ours to remove.
    await rmdir(path).catch(() => undefined);
    this.protectedPaths?.placeholders.delete(path);
  }

  /** The existing protected folders with exceptions inside the workspace, outermost first. */
  async pinned(): Promise<string[]> {
    const folders: string[] = [];
    for (const entry of this.protectedPaths?.entries ?? []) {
      if (!entry.except || entry.path === this.workspace || !isInside(this.workspace, entry.path)) continue;
      if ((await lstat(entry.path).catch(() => undefined))?.isDirectory()) folders.push(entry.path);
    }
    return folders.sort((left, right) => left.length - right.length);
  }

  private candidates(): string[] {
    if (!this.protectedPaths) return [];
    const paths = new Set<string>();
    for (const entry of this.protectedPaths.entries) {
      if (entry.path === this.workspace || !isInside(this.workspace, entry.path)) continue;
      if (!entry.except) {
        paths.add(entry.path);
        continue;
      }
      // A repository's folder stays writable for its objects, refs and index; every other entry
      // in it is mounted on its own. One a command creates there is caught by the check after it.
      for (const name of entriesOf(entry.path)) if (!matchesEntryName(entry.except, name)) paths.add(join(entry.path, name));
    }
    return [...paths];
  }

  private isMissingFolder(path: string): boolean {
    // An editor's folder a workspace lacks would appear in every listing the agent makes: one created
    // is caught by the check after the command, like a missing protected file.
    if (editorControlNames.has(basename(path))) return false;
    return this.protectedPaths?.entries.find((entry) => entry.path === path)?.kind === 'folder';
  }
}

function entriesOf(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}
