/**
 * Regular-expression search through the workspace's text files, for finding where something is
 * before viewing or editing it. Results are `path:line: text`, in a stable order, and bounded both
 * in count and in characters.
 */
import { defineTool, ToolError } from 'manus-runtime';
import type { SchemaInput, ToolContext, WorkspaceFolder } from 'manus-runtime';


interface SearchState {
  context: ToolContext;
  expression: RegExp;
  fileFilter: (relativeToRoot: string) => boolean;
  /** Workspace-relative path of the searched folder or file. */
  root: string;
  maximumResults: number;
  maximumOutput: number;
  lines: string[];
  characters: number;
  matchedFiles: number;
  searchedFiles: number;
  stoppedEarly: 'max_results' | 'max_output' | undefined;
}

const defaultMaximumResults = 100;
const defaultMaximumOutput = 16_000;
const skippedFolders = new Set(['.git', 'node_modules']);
const maximumFileBytes = 10 * 1024 * 1024;
const binaryProbeBytes = 8192;
/** Long lines (minified code, data) are shown around the match only. */
const maximumShownLineLength = 240;

const parameters = {
  type: 'object',
  properties: {
    pattern: { type: 'string', minLength: 1, description: 'JavaScript regular expression.' },
    path: { type: 'string', description: 'Folder or file; default the workspace.' },
    glob: { type: 'string', description: 'e.g. "src/**/*.py".' },
    case_sensitive: { type: 'boolean', default: false },
    max_results: { type: 'integer', minimum: 1, maximum: 1000, default: defaultMaximumResults },
  },
  required: ['pattern'],
} as const;

type SearchInput = SchemaInput<typeof parameters>;

export default defineTool({
  name: 'file_search',
  permissionArguments: { path: 'path', pattern: 'text' },
  description: 'Search workspace file contents for a pattern; returns `path:line: text`. Skips .git, node_modules and binary files.',
  parameters,
  async execute(input, context) {
    const expression = compilePattern(input.pattern, input.case_sensitive === true);
    const fileFilter = input.glob ? globFilter(input.glob) : () => true;
    const information = await context.files.inspect(input.path ?? '.').catch((error: unknown) => {
      if (ToolError.isInstance(error) && error.code === 'file_not_found') throw new ToolError(`The path ${input.path} does not exist.`, 'file_not_found');
      throw error;
    });
    const root = information.path;
    const state: SearchState = {
      context,
      expression,
      fileFilter,
      root,
      maximumResults: input.max_results ?? defaultMaximumResults,
      maximumOutput: readPositiveNumber(context.settings.max_output, defaultMaximumOutput),
      lines: [],
      characters: 0,
      matchedFiles: 0,
      searchedFiles: 0,
      stoppedEarly: undefined,
    };
    if (information.kind === 'folder') {
      const folder = await context.files.openFolder(root);
      try {
        await searchFolder(folder, state);
      } finally {
        await folder.close();
      }
    } else {
      await searchText(root, await context.files.readFile(root).catch(() => undefined), state);
    }
    return report(input, state);
  },
});

function compilePattern(pattern: string, caseSensitive: boolean): RegExp {
  try {
    return new RegExp(pattern, caseSensitive ? '' : 'i');
  } catch (error) {
    throw new ToolError(`The pattern is not a valid regular expression: ${(error as Error).message}`, 'invalid_pattern');
  }
}

/** Each sub-folder is opened through the folder above it, so one swapped for a link is not entered. */
async function searchFolder(folder: WorkspaceFolder, state: SearchState): Promise<void> {
  const entries = await folder.list();
  entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  for (const entry of entries) {
    if (state.stoppedEarly) return;
    state.context.signal.throwIfAborted();
    const path = folder.path === '.' ? entry.name : `${folder.path}/${entry.name}`;
    if (entry.kind === 'folder') {
      if (skippedFolders.has(entry.name)) continue;
      const subfolder = await folder.folder(entry.name);
      try {
        await searchFolder(subfolder, state);
      } finally {
        await subfolder.close();
      }
    } else if (entry.kind === 'file' && entry.size <= maximumFileBytes && state.fileFilter(belowRoot(state.root, path))) {
      // A file that changed into something else since the listing is skipped like a link.
      await searchText(path, await folder.readFile(entry.name, { maximumBytes: maximumFileBytes }).catch(() => undefined), state);
    }
  }
}

function belowRoot(root: string, path: string): string {
  return root === '.' ? path : path.slice(root.length + 1);
}

async function searchText(shownPath: string, bytes: Buffer | undefined, state: SearchState): Promise<void> {
  if (!bytes || bytes.length > maximumFileBytes) return;
  if (bytes.subarray(0, binaryProbeBytes).includes(0)) return;
  state.searchedFiles += 1;
  const lines = bytes.toString('utf8').split(/\r?\n/);
  let matchedHere = false;
  for (const [index, line] of lines.entries()) {
    const match = state.expression.exec(line);
    if (!match) continue;
    if (state.lines.length >= state.maximumResults) {
      state.stoppedEarly = 'max_results';
      return;
    }
    const entry = `${shownPath}:${index + 1}: ${excerpt(line, match.index)}`;
    if (state.characters + entry.length + 1 > state.maximumOutput) {
      state.stoppedEarly = 'max_output';
      return;
    }
    state.lines.push(entry);
    state.characters += entry.length + 1;
    if (!matchedHere) state.matchedFiles += 1;
    matchedHere = true;
  }
}

/** The line, or for a long line a window of it starting a little before the match. */
function excerpt(line: string, matchIndex: number): string {
  if (line.length <= maximumShownLineLength) return line;
  const start = Math.max(0, matchIndex - 60);
  const end = Math.min(line.length, start + maximumShownLineLength);
  return `${start > 0 ? '...' : ''}${line.slice(start, end)}${end < line.length ? '...' : ''}`;
}

function report(input: SearchInput, state: SearchState): string {
  const where = input.path ?? 'the workspace';
  if (state.lines.length === 0) {
    return `No matches for /${input.pattern}/ in ${where} (${state.searchedFiles} text files searched).`;
  }
  const matches = `${state.lines.length} ${state.lines.length === 1 ? 'match' : 'matches'}`;
  const summary = `${matches} in ${state.matchedFiles} ${state.matchedFiles === 1 ? 'file' : 'files'}`;
  const notes: Record<NonNullable<SearchState['stoppedEarly']>, string> = {
    max_results: `Stopped at max_results (${state.maximumResults}); more matches exist. Narrow the pattern, path or glob.`,
    max_output: `Stopped at ${state.maximumOutput} characters of output; more matches may exist. Narrow the pattern, path or glob.`,
  };
  const note = state.stoppedEarly ? `\n[${notes[state.stoppedEarly]}]` : '';
  return `${summary}:\n${state.lines.join('\n')}${note}`;
}

/**
 * A filter from a glob: `*` and `?` stay within one path segment, `**` spans folders, `{a,b}`
 * gives alternatives and `[...]` a character class. A glob without "/" matches file names only.
 */
function globFilter(glob: string): (relativePath: string) => boolean {
  const expression = new RegExp(`^${globToExpression(glob)}$`);
  if (glob.includes('/')) return (relativePath) => expression.test(relativePath);
  return (relativePath) => expression.test(relativePath.slice(relativePath.lastIndexOf('/') + 1));
}

function globToExpression(glob: string): string {
  let expression = '';
  let braceDepth = 0;
  for (let index = 0; index < glob.length; index += 1) {
    const character = glob[index];
    if (character === '*') {
      if (glob[index + 1] === '*') {
        const followedBySlash = glob[index + 2] === '/';
        expression += followedBySlash ? '(?:.*/)?' : '.*';
        index += followedBySlash ? 2 : 1;
      } else {
        expression += '[^/]*';
      }
    } else if (character === '?') {
      expression += '[^/]';
    } else if (character === '[') {
      const close = glob.indexOf(']', index + 2);
      if (close === -1) throw invalidGlob(glob, 'a "[" has no matching "]"');
      const members = glob.slice(index + 1, close).replace(/^!/, '^').replace(/\\/g, '\\\\');
      expression += `[${members}]`;
      index = close;
    } else if (character === '{') {
      braceDepth += 1;
      expression += '(?:';
    } else if (character === '}' && braceDepth > 0) {
      braceDepth -= 1;
      expression += ')';
    } else if (character === ',' && braceDepth > 0) {
      expression += '|';
    } else {
      expression += character.replace(/[.+^${}()|\\\]]/g, '\\$&');
    }
  }
  if (braceDepth > 0) throw invalidGlob(glob, 'a "{" has no matching "}"');
  return expression;
}

function invalidGlob(glob: string, problem: string): ToolError {
  return new ToolError(`The glob "${glob}" is not valid: ${problem}.`, 'invalid_glob');
}

function readPositiveNumber(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}
