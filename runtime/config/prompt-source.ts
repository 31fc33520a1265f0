import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Diagnostic, SourceLocation } from '../contract/errors.js';
import { locate, type YamlPath, type YamlSource } from './yaml-source.js';

export interface LoadedPrompt {
  text: string;
  /** Set for `file:` prompts: positions in `text` then belong to this file, not the YAML. */
  file?: string;
  location: SourceLocation;
}

/** Reads an inline prompt or a `{file: path}` prompt relative to the YAML file that names it. */
export function loadPrompt(source: YamlSource, path: YamlPath, value: unknown, diagnostics: Diagnostic[]): LoadedPrompt | undefined {
  if (typeof value === 'string') return { text: value, location: locate(source, path) };
  if (value && typeof value === 'object' && typeof (value as { file?: unknown }).file === 'string') {
    const relative = (value as { file: string }).file;
    const file = resolve(dirname(source.file), relative);
    try {
      return { text: readFileSync(file, 'utf8'), file, location: { file, line: 1, column: 1 } };
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
      diagnostics.push({
        severity: 'error',
        message: `prompt file '${relative}' cannot be read: ${reason} (looked for ${file})`,
        location: locate(source, [...path, 'file']),
      });
    }
  }
  return undefined;
}
