/** `manus batch show <id>`: a batch's table, or with --json its record and items as one object. */
import { hostname } from 'node:os';
import { batchesDirectoryFor, readBatchFolder, resolveBatchDirectory } from '../runtime/applications/batch/batch-folder.js';
import { processIsAlive } from '../runtime/runs/run-history.js';
import { batchReport } from '../runtime/applications/reports/batch-report.js';
import { printBatchTable } from './batch-table.js';
import { ExitCode } from './exit-codes.js';

export async function batchShowCommand(id: string, options: { json?: boolean; batchesDir?: string }): Promise<number> {
  const directory = resolveBatchDirectory(batchesDirectoryFor(process.cwd(), process.env, options.batchesDir), id);
  const contents = readBatchFolder(directory);
  for (const warning of contents.warnings) process.stderr.write(`warning: ${warning}\n`);
  const { record } = contents;
  if (record.status === 'running' && record.settings.host === hostname() && !processIsAlive(record.settings.pid)) {
    process.stderr.write(`batch ${record.id} stopped without finishing (its process is gone); continue it with: manus batch resume ${record.id}\n`);
  }
  const report = batchReport(record, [...contents.items.values()]);
  if (options.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else printBatchTable(report, (text) => process.stdout.write(text));
  return ExitCode.success;
}
