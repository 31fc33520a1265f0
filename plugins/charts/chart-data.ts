/**
 * The rows a chart draws: given inline, or read from a CSV or JSON file in the workspace. Files
 * are parsed with Vega's own reader, so the values are typed the way Vega itself would type them.
 */
import { extname } from 'node:path';
import { ToolError, type ToolContext } from 'manus-runtime';

export type DataRow = Record<string, unknown>;

/** Files larger than this are refused: a chart of more rows would not be readable anyway. */
const maximumFileBytes = 20 * 1024 * 1024;

export function checkInlineRows(rows: unknown[]): DataRow[] {
  const bad = rows.findIndex((row) => typeof row !== 'object' || row === null || Array.isArray(row));
  if (bad !== -1) throw new ToolError(`Each entry of "data" must be an object (a row of named fields); entry ${bad} is not.`, 'invalid_data');
  return rows as DataRow[];
}

export async function readDataFile(context: ToolContext, requestedPath: string): Promise<DataRow[]> {
  // A path outside the workspace is refused before its format is looked at.
  context.files.relativePath(requestedPath);
  const format = dataFormatOf(requestedPath);
  let text: string;
  try {
    const bytes = await context.files.readFile(requestedPath, { maximumBytes: maximumFileBytes });
    text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    if (ToolError.isInstance(error) && error.code === 'file_too_large') {
      throw new ToolError(`The file ${requestedPath} is larger than ${maximumFileBytes / 1024 / 1024} MB; aggregate it first.`, 'data_too_large');
    }
    if (ToolError.isInstance(error) && error.code.startsWith('path_')) throw error;
    throw new ToolError(`The data file ${requestedPath} cannot be read: ${(error as Error).message}`, 'file_not_found');
  }
  if (format === 'json') return jsonRows(text, requestedPath);
  const { read } = await import('vega');
  return read(text, { type: format, parse: 'auto' }) as DataRow[];
}

function dataFormatOf(path: string): 'csv' | 'tsv' | 'json' {
  const extension = extname(path).toLowerCase();
  if (extension === '.csv') return 'csv';
  if (extension === '.tsv') return 'tsv';
  if (extension === '.json') return 'json';
  throw new ToolError(`The data file ${path} is not CSV, TSV or JSON (by its extension); convert it first, for example with python_execute.`, 'unsupported_data_format');
}

/** An array of rows, or an object holding exactly one such array (as many exports do). */
function jsonRows(text: string, path: string): DataRow[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ToolError(`The data file ${path} is not valid JSON: ${(error as Error).message}`, 'invalid_data');
  }
  if (!Array.isArray(value) && typeof value === 'object' && value !== null) {
    const arrays = Object.values(value).filter(Array.isArray);
    if (arrays.length === 1) value = arrays[0];
  }
  if (!Array.isArray(value)) throw new ToolError(`The data file ${path} holds no array of rows.`, 'invalid_data');
  return checkInlineRows(value);
}
