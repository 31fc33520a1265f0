/**
 * The file editor models know from OpenManus: view, create, str_replace, insert and undo_edit.
 * Every file is opened through `context.files`, so no path leaves the workspace, even while the
 * agent's processes swap folders for links, and writes to the run's protected paths (plugin
 * folders, agents.yaml, the recipe, `.git/hooks`) and to files with other hard links are refused.
 * Each file keeps its own undo history for the run, and
 * commands on one file run one after another even when a turn asks for several at once.
 */
import { ToolError, defineTool, truncateMiddle } from 'manus-runtime';
import type { SchemaInput, ToolContext, ToolResult, WorkspaceFolder } from 'manus-runtime';


/** What every command needs to know about the call. */
interface EditTarget {
  context: ToolContext;
  /** The path relative to the workspace, as shown to the model; every operation opens it afresh through `context.files`. */
  displayPath: string;
  maximumOutput: number;
}

/** Earlier contents of each file by workspace-relative path, newest last; null marks a file this tool created. */
type EditHistory = Map<string, Array<string | null>>;

const defaultMaximumOutput = 16_000;
const snippetContextLines = 4;
/** Larger files are left to shell tools; holding them and their undo copies in memory is wasteful. */
const maximumFileBytes = 10 * 1024 * 1024;
/** How much of a file's start is checked for NUL bytes to tell binary files from text. */
const binaryProbeBytes = 8192;
const historyResourceKey = 'str_replace_editor.history';

const parameters = {
  type: 'object',
  properties: {
    command: {
      type: 'string',
      enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'],
    },
    path: { type: 'string' },
    file_text: { type: 'string', description: 'For create.' },
    old_str: { type: 'string', description: 'Exact text occurring once in the file.' },
    new_str: { type: 'string', description: 'For str_replace and insert.' },
    insert_line: { type: 'integer', minimum: 0, description: 'Insert after this line; 0 for the top.' },
    view_range: {
      type: 'array',
      items: { type: 'integer' },
      minItems: 2,
      maxItems: 2,
      description: '[start, end] from 1; end -1 for the last line.',
    },
  },
  required: ['command', 'path'],
} as const;

type EditorInput = SchemaInput<typeof parameters>;

export default defineTool({
  name: 'str_replace_editor',
  permissionArguments: { path: 'path' },
  description: [
    'View, create and edit workspace files.',
    'view: a file with line numbers, or a folder two levels deep. create: a new file, never overwriting.',
    'str_replace: old_str, verbatim, by new_str. insert: new_str after insert_line. undo_edit: revert the last edit.',
  ].join('\n'),
  guide: [
    'Paths may be relative to the workspace or absolute inside it.',
    '* view: a file is shown with line numbers (like `cat -n`); view_range [start, end] shows only those lines',
    '  (end -1 means to the last line). A directory is listed two levels deep, hidden entries skipped.',
    '* create: writes file_text to a new file (parent folders are created); it never overwrites a file.',
    '* str_replace: replaces old_str, which must occur exactly once in the file and match it verbatim',
    '  (whitespace included), with new_str (empty or omitted to delete).',
    '* insert: inserts new_str after line insert_line (0 inserts at the top).',
    '* undo_edit: reverts the last create, str_replace or insert on the file; repeat to go further back.',
    'Long output is clipped; use view_range to read a long file in parts.',
  ].join('\n'),
  parameters,
  async execute(input, context) {
    const target: EditTarget = {
      context,
      displayPath: context.files.relativePath(input.path),
      maximumOutput: readMaximumOutput(context.settings),
    };
    return serialisedByPath(`${context.files.root}\0${target.displayPath}`, () => runCommand(input, target));
  },
});

async function runCommand(input: EditorInput, target: EditTarget): Promise<string | ToolResult> {
  switch (input.command) {
    case 'view':
      return view(target, input.view_range);
    case 'create':
      return create(target, required(input.file_text, 'file_text', 'create'));
    case 'str_replace':
      return replace(target, required(input.old_str, 'old_str', 'str_replace'), input.new_str ?? '');
    case 'insert':
      return insert(
        target,
        required(input.insert_line, 'insert_line', 'insert'),
        required(input.new_str, 'new_str', 'insert'),
      );
    case 'undo_edit':
      return undo(target);
  }
}

async function view(target: EditTarget, viewRange: number[] | undefined): Promise<string> {
  const information = await target.context.files.inspect(target.displayPath);
  if (information.kind === 'folder') {
    if (viewRange) throw new ToolError('view_range applies to files, not to directories.', 'invalid_parameter');
    return listDirectory(target);
  }
  const { text } = await readTextFile(target, { forEditing: false });
  const lines = splitLines(text);
  if (lines.length === 0) return `The file ${target.displayPath} is empty.`;
  const [first, last] = viewRange ? checkViewRange(viewRange, lines.length) : [1, lines.length];
  const header = `Here's the result of running \`cat -n\` on ${target.displayPath}:\n`;
  return header + numberedWithinLimit(lines, first, last, target.maximumOutput - header.length);
}

async function create(target: EditTarget, fileText: string): Promise<ToolResult> {
  try {
    // Created exclusively, so "never overwrite" holds even against a file created a moment ago.
    await target.context.files.createFile(target.displayPath, fileText, { parents: true });
  } catch (error) {
    if (ToolError.isInstance(error) && error.code === 'file_exists') {
      throw new ToolError(
        `File already exists at: ${target.displayPath}. The create command does not overwrite files; ` +
          'use str_replace or insert to change it.',
        'file_exists',
      );
    }
    throw error;
  }
  await remember(target, null);
  return { content: `File created successfully at: ${target.displayPath}`, files: [target.displayPath] };
}

async function replace(target: EditTarget, oldText: string, newText: string): Promise<ToolResult> {
  if (oldText === '') throw new ToolError('old_str is empty; give the exact text to replace.', 'invalid_parameter');
  const file = await readTextFile(target, { forEditing: true });
  const search = file.normalise(oldText);
  const replacement = file.normalise(newText);
  if (search === replacement) throw new ToolError('new_str is identical to old_str; nothing would change.', 'invalid_parameter');

  const positions = occurrences(file.text, search);
  if (positions.length === 0) {
    throw new ToolError(
      `No replacement was performed: old_str did not appear verbatim in ${target.displayPath}. ` +
        'Check whitespace and indentation, or view the file to copy the exact text.',
      'text_not_found',
    );
  }
  if (positions.length > 1) {
    const lineNumbers = positions.map((position) => lineIndexAt(file.text, position) + 1);
    throw new ToolError(
      `No replacement was performed: old_str occurs ${positions.length} times in ${target.displayPath} ` +
        `(starting on lines ${lineNumbers.join(', ')}). Include more surrounding text to make it unique.`,
      'text_not_unique',
    );
  }

  const [position] = positions;
  const updated = file.text.slice(0, position) + replacement + file.text.slice(position + search.length);
  await file.save(updated);
  await remember(target, file.original);
  const firstLine = lineIndexAt(updated, position);
  const snippet = snippetAround(updated, firstLine, firstLine + countNewlines(replacement), target);
  return {
    content:
      `The file ${target.displayPath} has been edited. ${snippet}` +
      'Review the changes and make sure they are as expected. Edit the file again if necessary.',
    files: [target.displayPath],
  };
}

async function insert(target: EditTarget, insertLine: number, newText: string): Promise<ToolResult> {
  const file = await readTextFile(target, { forEditing: true });
  const lines = splitLines(file.text);
  if (insertLine > lines.length) {
    throw new ToolError(
      `insert_line ${insertLine} is past the end of ${target.displayPath}, which has ${lines.length} lines; ` +
        `use a value from 0 to ${lines.length}.`,
      'invalid_parameter',
    );
  }
  const inserted = splitLines(file.normalise(newText));
  const insertedLines = inserted.length === 0 ? [''] : inserted;
  const updatedLines = [...lines.slice(0, insertLine), ...insertedLines, ...lines.slice(insertLine)];
  const keepsFinalNewline = lines.length === 0 || file.text.endsWith('\n');
  const updated = updatedLines.join('\n') + (keepsFinalNewline ? '\n' : '');
  await file.save(updated);
  await remember(target, file.original);
  const snippet = snippetAround(updated, insertLine, insertLine + insertedLines.length - 1, target);
  return {
    content:
      `The file ${target.displayPath} has been edited. ${snippet}` +
      'Review the changes and make sure they are as expected (correct indentation, no duplicate lines). ' +
      'Edit the file again if necessary.',
    files: [target.displayPath],
  };
}

async function undo(target: EditTarget): Promise<string | ToolResult> {
  const history = await editHistory(target.context);
  const earlier = history.get(target.displayPath);
  if (!earlier || earlier.length === 0) {
    throw new ToolError(`No edit history found for ${target.displayPath}.`, 'nothing_to_undo');
  }
  const previous = earlier.pop() as string | null;
  if (earlier.length === 0) history.delete(target.displayPath);
  if (previous === null) {
    await target.context.files.remove(target.displayPath).catch((error: unknown) => {
      if (!(ToolError.isInstance(error) && error.code === 'file_not_found')) throw error;
    });
    return `Undid the creation of ${target.displayPath}: the file was removed.`;
  }
  await target.context.files.writeFile(target.displayPath, previous);
  const header = `Last edit to ${target.displayPath} undone successfully. Here's the result of running \`cat -n\` on it:\n`;
  const lines = splitLines(previous.replaceAll('\r\n', '\n'));
  const body =
    lines.length === 0
      ? 'The file is now empty.'
      : numberedWithinLimit(lines, 1, lines.length, target.maximumOutput - header.length);
  return { content: header + body, files: [target.displayPath] };
}

interface TextFile {
  /** The content with CRLF line endings turned into LF when the file uses CRLF throughout. */
  text: string;
  /** The content exactly as read, for undo. */
  original: string;
  /** Brings text from the model to the line endings `text` uses. */
  normalise(text: string): string;
  /** Writes `text`, restoring the file's line endings. */
  save(text: string): Promise<void>;
}

async function readTextFile(target: EditTarget, options: { forEditing: boolean }): Promise<TextFile> {
  const bytes = await target.context.files.readFile(target.displayPath, { maximumBytes: maximumFileBytes }).catch((error: unknown) => {
    if (!ToolError.isInstance(error)) throw error;
    if (error.code === 'is_directory') {
      throw new ToolError(`${target.displayPath} is a directory; this command needs a file.`, 'is_directory');
    }
    if (error.code === 'file_too_large') {
      throw new ToolError(`${error.message.replace(/\.$/, '')} the editor reads; use file_search or a shell tool for it.`, 'file_too_large');
    }
    throw error;
  });
  if (bytes.subarray(0, binaryProbeBytes).includes(0)) {
    throw new ToolError(`${target.displayPath} looks like a binary file; the editor handles text only.`, 'binary_file');
  }
  let original: string;
  try {
    // Fatal decoding: rewriting a file whose invalid bytes became U+FFFD would corrupt it.
    original = new TextDecoder('utf-8', { fatal: options.forEditing, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ToolError(`${target.displayPath} is not valid UTF-8; editing it here would corrupt it.`, 'not_utf8');
  }
  const usesCrlf = original.includes('\r\n') && countNewlines(original) === original.split('\r\n').length - 1;
  return {
    original,
    text: usesCrlf ? original.replaceAll('\r\n', '\n') : original,
    normalise: (text) => (usesCrlf ? text.replaceAll('\r\n', '\n') : text),
    save: async (text) => {
      await target.context.files.writeFile(target.displayPath, usesCrlf ? text.replaceAll('\n', '\r\n') : text);
    },
  };
}

async function listDirectory(target: EditTarget): Promise<string> {
  const entries: string[] = [];
  // Each folder is listed through the one opened before it, so a folder swapped for a link is not entered.
  const visit = async (folder: WorkspaceFolder, depth: number) => {
    const children = await folder.list();
    children.sort((left, right) => left.name.localeCompare(right.name));
    for (const child of children) {
      if (child.name.startsWith('.')) continue;
      const shown = folder.path === '.' ? child.name : `${folder.path}/${child.name}`;
      entries.push(child.kind === 'folder' ? `${shown}/` : shown);
      if (child.kind !== 'folder' || depth >= 2) continue;
      const subfolder = await folder.folder(child.name);
      try {
        await visit(subfolder, depth + 1);
      } finally {
        await subfolder.close();
      }
    }
  };
  const root = await target.context.files.openFolder(target.displayPath);
  try {
    await visit(root, 1);
  } finally {
    await root.close();
  }
  const header = `Here are the files and directories up to 2 levels deep in ${target.displayPath}, excluding hidden items:\n`;
  const listing = entries.length === 0 ? '(empty)' : entries.join('\n');
  return header + truncateMiddle(listing, target.maximumOutput - header.length, 'view a subfolder to see all of it').text;
}

/**
 * Lines `first`..`last` (counting from 1) numbered like `cat -n`, cut at a line boundary when
 * they would pass `limit` characters, with a note saying which view_range continues.
 */
function numberedWithinLimit(lines: string[], first: number, last: number, limit: number): string {
  const numbered = (number: number) => `${String(number).padStart(6)}\t${lines[number - 1]}\n`;
  const shown: string[] = [];
  let length = 0;
  for (let number = first; number <= last && length <= limit; number += 1) {
    shown.push(numbered(number));
    length += shown[shown.length - 1].length;
  }
  if (length <= limit) return shown.join('');

  const continuation = (next: number) =>
    next > last ? '' : ` Continue with view_range [${next}, ${last === lines.length ? -1 : last}].`;
  const note = (lastShown: number) =>
    `[Output clipped at line ${lastShown} of ${lines.length} to stay within ${limit} characters.` +
    `${continuation(lastShown + 1)} Use file_search to find the lines you need.]\n`;
  // The longest note: the one with a continuation and the widest line numbers.
  const room = limit - note(Math.max(first, last - 1)).length;
  while (shown.length > 0 && length > room) length -= (shown.pop() as string).length;
  if (shown.length > 0) return shown.join('') + note(first + shown.length - 1);
  const clipped = truncateMiddle(numbered(first), room - 1, `line ${first} is too long to show whole`).text;
  return `${clipped}\n${note(first)}`;
}

function snippetAround(text: string, firstLine: number, lastLine: number, target: EditTarget): string {
  const lines = splitLines(text);
  const start = Math.max(0, firstLine - snippetContextLines);
  const end = Math.min(lines.length, lastLine + snippetContextLines + 1);
  if (end <= start) return `${target.displayPath} is now empty. `;
  const header = `Here's the result of running \`cat -n\` on a snippet of ${target.displayPath}:\n`;
  return header + numberedWithinLimit(lines, start + 1, end, target.maximumOutput - header.length);
}

function checkViewRange(viewRange: number[], lineCount: number): [number, number] {
  const [first, requestedLast] = viewRange;
  if (first < 1 || first > lineCount) {
    throw new ToolError(
      `view_range start ${first} is outside the file, whose lines are numbered 1 to ${lineCount}.`,
      'invalid_parameter',
    );
  }
  if (requestedLast === -1) return [first, lineCount];
  if (requestedLast < first) {
    throw new ToolError(
      `view_range end ${requestedLast} is before its start ${first}; use -1 to read to the last line.`,
      'invalid_parameter',
    );
  }
  return [first, Math.min(requestedLast, lineCount)];
}

/** Lines of a text; a final newline ends the last line rather than starting an empty one. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
}

/** Start offsets of every occurrence, overlapping ones included, so "aa" in "aaa" counts twice. */
function occurrences(text: string, search: string): number[] {
  const positions: number[] = [];
  for (let position = text.indexOf(search); position !== -1; position = text.indexOf(search, position + 1)) {
    positions.push(position);
  }
  return positions;
}

function lineIndexAt(text: string, offset: number): number {
  return countNewlines(text.slice(0, offset));
}

function countNewlines(text: string): number {
  let count = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) count += 1;
  return count;
}

async function editHistory(context: ToolContext): Promise<EditHistory> {
  return context.resources.get<EditHistory>(historyResourceKey, () => new Map());
}

async function remember(target: EditTarget, previous: string | null): Promise<void> {
  const history = await editHistory(target.context);
  const earlier = history.get(target.displayPath) ?? [];
  earlier.push(previous);
  history.set(target.displayPath, earlier);
}

const pendingByPath = new Map<string, Promise<void>>();

/** Runs `action` after every earlier action on the same path has settled. */
async function serialisedByPath<T>(path: string, action: () => Promise<T>): Promise<T> {
  const previous = pendingByPath.get(path) ?? Promise.resolve();
  const current = previous.then(action);
  const settled = current.then(
    () => undefined,
    () => undefined,
  );
  pendingByPath.set(path, settled);
  try {
    return await current;
  } finally {
    if (pendingByPath.get(path) === settled) pendingByPath.delete(path);
  }
}

function required<T>(value: T | undefined, name: string, command: string): T {
  if (value === undefined) throw new ToolError(`Parameter ${name} is required for command ${command}.`, 'missing_parameter');
  return value;
}

function readMaximumOutput(settings: Record<string, unknown>): number {
  const value = settings.max_output;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : defaultMaximumOutput;
}
