/**
 * A tree of the workspace (or one folder of it) with file sizes, so a model can see what exists
 * without a shell. Folders end with "/"; folders past the depth show how many entries they hold.
 */
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { defineTool, resolveToolPath, ToolError } from 'manus-runtime';


interface ListState {
  maximumDepth: number;
  maximumOutput: number;
  lines: string[];
  characters: number;
  clipped: boolean;
}

const defaultDepth = 2;
const defaultMaximumOutput = 16_000;
/** Folders that are listed but never opened: large, and not written by hand. */
const unexpandedFolders = new Set(['.git', 'node_modules']);

export default defineTool({
  name: 'list_files',
  description: 'List workspace files and folders as a tree with sizes.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Default the workspace.' },
      depth: { type: 'integer', minimum: 1, maximum: 10, default: defaultDepth },
    },
  },
  async execute(input, context) {
    const root = resolveToolPath(context, input.path ?? '.', 'read');
    const shownRoot = relative(context.workspace, root).split(sep).join('/') || '.';
    const information = await lstat(root).catch(() => {
      throw new ToolError(`The path ${input.path} does not exist.`, 'file_not_found');
    });
    if (!information.isDirectory()) return `${shownRoot} (${formatSize(information.size)})`;
    const state: ListState = {
      maximumDepth: input.depth ?? defaultDepth,
      maximumOutput: readPositiveNumber(context.settings.max_output, defaultMaximumOutput),
      lines: [],
      characters: 0,
      clipped: false,
    };
    addLine(state, `${shownRoot}/`);
    await listFolder(root, 1, state, context.signal);
    const note = state.clipped
      ? `\n[Listing clipped at ${state.maximumOutput} characters. List a subfolder with path, or lower depth.]`
      : '';
    return state.lines.join('\n') + note;
  },
});

async function listFolder(folder: string, depth: number, state: ListState, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  const indent = '  '.repeat(depth);
  const entries = await readdir(folder, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    addLine(state, `${indent}(not readable: ${error.code ?? error.message})`);
    return [];
  });
  // Folders first, then files, each alphabetically, as most file browsers show them.
  entries.sort((left, right) => {
    if (left.isDirectory() !== right.isDirectory()) return left.isDirectory() ? -1 : 1;
    return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
  });
  for (const entry of entries) {
    if (state.clipped) return;
    const path = join(folder, entry.name);
    if (entry.isSymbolicLink()) {
      addLine(state, `${indent}${entry.name} -> ${await readlink(path)}`);
    } else if (entry.isDirectory()) {
      if (unexpandedFolders.has(entry.name)) {
        addLine(state, `${indent}${entry.name}/ (not opened)`);
      } else if (depth >= state.maximumDepth) {
        const count = await readdir(path).then((names) => names.length, () => undefined);
        const contents = count === undefined ? 'not readable' : `${count} ${count === 1 ? 'entry' : 'entries'}`;
        addLine(state, `${indent}${entry.name}/ (${contents})`);
      } else {
        addLine(state, `${indent}${entry.name}/`);
        await listFolder(path, depth + 1, state, signal);
      }
    } else {
      const { size } = await lstat(path);
      addLine(state, `${indent}${entry.name} (${formatSize(size)})`);
    }
  }
}

function addLine(state: ListState, line: string): void {
  if (state.characters + line.length + 1 > state.maximumOutput) {
    state.clipped = true;
    return;
  }
  state.lines.push(line);
  state.characters += line.length + 1;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

function readPositiveNumber(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}
