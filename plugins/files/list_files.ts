/**
 * A tree of the workspace (or one folder of it) with file sizes, so a model can see what exists
 * without a shell. Folders end with "/"; folders past the depth show how many entries they hold.
 */
import { defineTool, ToolError } from 'manus-runtime';
import type { WorkspaceFolder } from 'manus-runtime';


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
  permissionArguments: { path: 'path' },
  description: 'List workspace files and folders as a tree with sizes; .git and node_modules are not opened.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Default the workspace.' },
      depth: { type: 'integer', minimum: 1, maximum: 10, default: defaultDepth },
    },
  },
  async execute(input, context) {
    const information = await context.files.inspect(input.path ?? '.').catch((error: unknown) => {
      if (ToolError.isInstance(error) && error.code === 'file_not_found') throw new ToolError(`The path ${input.path} does not exist.`, 'file_not_found');
      throw error;
    });
    const shownRoot = information.path;
    if (information.kind !== 'folder') return `${shownRoot} (${formatSize(information.size)})`;
    const state: ListState = {
      maximumDepth: input.depth ?? defaultDepth,
      maximumOutput: readPositiveNumber(context.settings.max_output, defaultMaximumOutput),
      lines: [],
      characters: 0,
      clipped: false,
    };
    addLine(state, `${shownRoot}/`);
    const root = await context.files.openFolder(shownRoot);
    try {
      await listFolder(root, 1, state, context.signal);
    } finally {
      await root.close();
    }
    const note = state.clipped
      ? `\n[Listing clipped at ${state.maximumOutput} characters. List a subfolder with path, or lower depth.]`
      : '';
    return state.lines.join('\n') + note;
  },
});

/** Each sub-folder is opened through the folder above it, so one swapped for a link is not entered. */
async function listFolder(folder: WorkspaceFolder, depth: number, state: ListState, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  const indent = '  '.repeat(depth);
  const entries = await folder.list().catch((error: Error) => {
    addLine(state, `${indent}(not readable: ${error.message})`);
    return [];
  });
  // Folders first, then files, each alphabetically, as most file browsers show them.
  entries.sort((left, right) => {
    if ((left.kind === 'folder') !== (right.kind === 'folder')) return left.kind === 'folder' ? -1 : 1;
    return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
  });
  for (const entry of entries) {
    if (state.clipped) return;
    if (entry.kind === 'link') {
      addLine(state, `${indent}${entry.name} -> ${entry.linkTarget}`);
    } else if (entry.kind === 'folder') {
      if (unexpandedFolders.has(entry.name)) {
        addLine(state, `${indent}${entry.name}/ (not opened)`);
        continue;
      }
      const subfolder = await folder.folder(entry.name).catch(() => undefined);
      try {
        if (!subfolder) {
          addLine(state, `${indent}${entry.name}/ (not readable)`);
        } else if (depth >= state.maximumDepth) {
          const count = await subfolder.list().then((names) => names.length, () => undefined);
          const contents = count === undefined ? 'not readable' : `${count} ${count === 1 ? 'entry' : 'entries'}`;
          addLine(state, `${indent}${entry.name}/ (${contents})`);
        } else {
          addLine(state, `${indent}${entry.name}/`);
          await listFolder(subfolder, depth + 1, state, signal);
        }
      } finally {
        await subfolder?.close();
      }
    } else {
      addLine(state, `${indent}${entry.name} (${formatSize(entry.size)})`);
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
