import { dirname, resolve } from 'node:path';
import type { Diagnostic, SourceLocation } from '../contract/errors.js';
import { packOfAgentsFile, packOfFile } from './pack-manifest.js';
import { ConfinedFileError, readConfinedFile } from './confined-file.js';
import { locate, type YamlPath, type YamlSource } from './yaml-source.js';

export interface LoadedPrompt {
  text: string;
  /** Set for `file:` prompts: positions in `text` then belong to this file, not the YAML. */
  file?: string;
  location: SourceLocation;
}

/**
 * Reads an inline prompt or a `{file: path}` prompt relative to the YAML file that names it. The
 * file must lie inside that YAML's folder, or inside its pack for a pack's recipe or agents file,
 * and is opened without following links: a recipe cannot send the model a file of the user's.
 */
export function loadPrompt(source: YamlSource, path: YamlPath, value: unknown, diagnostics: Diagnostic[]): LoadedPrompt | undefined {
  if (typeof value === 'string') return { text: value, location: locate(source, path) };
  if (value && typeof value === 'object' && typeof (value as { file?: unknown }).file === 'string') {
    const relative = (value as { file: string }).file;
    const file = resolve(dirname(source.file), relative);
    const { folder, kind } = promptFolderOf(source.file);
    try {
      return { text: readConfinedFile(folder, file), file, location: { file, line: 1, column: 1 } };
    } catch (error) {
      if (!(error instanceof ConfinedFileError)) throw error;
      const reason = error.problem === 'missing'
        ? error.message
        : `${error.message}; a prompt file must be inside ${kind} (${folder})`;
      diagnostics.push({
        severity: 'error',
        message: `prompt file '${relative}' cannot be read: ${reason}`,
        location: locate(source, [...path, 'file']),
      });
    }
  }
  return undefined;
}

/** Where a YAML file's prompt files may lie: its pack, for a pack's recipe or agents file; else its own folder. */
export function promptFolderOf(yamlFile: string): { folder: string; kind: string } {
  const pack = packOfFile(yamlFile) ?? packOfAgentsFile(yamlFile);
  return pack ? { folder: pack.folder, kind: `the pack ${pack.name}` } : { folder: dirname(resolve(yamlFile)), kind: 'the folder of the file that names it' };
}
