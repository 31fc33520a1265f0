/**
 * What a tool and a sandbox see of the paths a run protects: the list, and the checks made before
 * and after anything writes. services/protected-paths/ implements it for a run.
 */
export interface ProtectedPath {
  /** Absolute path, with the links of its existing part resolved. */
  path: string;
  kind: 'file' | 'folder';
  /** Why it is protected, for error messages. */
  reason: string;
  /**
   * Compared after each command. The runs folder is not: the runtime itself writes there during
   * the run; sandboxes and file tools still keep the agent out of it.
   */
  watched: boolean;
  /**
   * For a folder: entries directly inside it that are not protected, by name or `*suffix` (a
   * repository's objects, refs and index). The folder itself may then be written to, as git
   * makes its lock files there; every other entry in it is protected.
   */
  except?: readonly string[];
}

export interface ProtectedPathGuard {
  /**
   * Read-only folders a sandbox put where a protected folder did not exist, so a command cannot
   * create it; they exist only while a command runs and count as absent.
   */
  readonly placeholders: Set<string>;
  readonly entries: readonly ProtectedPath[];
  /** Resolves once the protected state is captured; every tool call and sandbox awaits it before anything runs. */
  ready(): Promise<void>;
  /** The entry that protects `path` (the entry itself or a path inside a protected folder). */
  protectionOf(path: string): ProtectedPath | undefined;
  /** The entry whose file `path` shares its inode with: a hard link, which writes the protected file whatever its name. */
  hardLinkedProtection(path: string): ProtectedPath | undefined;
  /** Remembers the current state of every watched path; `verify` compares against it. */
  capture(): Promise<void>;
  /** Compares the watched paths with the captured state, undoes a change and stops the run. */
  verify(): Promise<void>;
}
