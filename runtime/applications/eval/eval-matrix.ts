/**
 * The eval's runs as batch items: one per model, row and repeat, numbered model by model, row by
 * row, so a batch index always names the same cell of the matrix.
 */
import type { BatchInput } from '../batch/batch-inputs.js';
import type { EvalRow } from './eval-file.js';

export interface EvalCell {
  index: number;
  rowIndex: number;
  row: string;
  /** The model profile or id the run uses; undefined for the recipe's own. */
  model?: string;
  /** From 0. */
  repeat: number;
}

export interface EvalMatrix {
  models: Array<string | undefined>;
  repeat: number;
  rows: EvalRow[];
  cells: EvalCell[];
}

export function evalMatrix(rows: EvalRow[], models: Array<string | undefined>, repeat: number): EvalMatrix {
  const cells: EvalCell[] = [];
  models.forEach((model, modelIndex) => {
    rows.forEach((row, rowIndex) => {
      for (let each = 0; each < repeat; each += 1) {
        cells.push({ index: (modelIndex * rows.length + rowIndex) * repeat + each, rowIndex, row: row.id, ...(model !== undefined ? { model } : {}), repeat: each });
      }
    });
  });
  return { models, repeat, rows, cells };
}

/** The batch items the cells are: each with its row's parameters. */
export function matrixInputs(matrix: EvalMatrix): BatchInput[] {
  return matrix.cells.map((cell) => ({ index: cell.index, line: cell.rowIndex + 1, parameters: matrix.rows[cell.rowIndex].parameters }));
}

/** How a model is named in tables and eval.json: as given, or `default` for the recipe's own. */
export function modelLabel(model: string | undefined): string {
  return model ?? 'default';
}
