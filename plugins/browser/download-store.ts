/**
 * Saves the files pages download into the workspace (under `downloads_folder`), never over an
 * existing file, and keeps what finished or failed until an action reports it. A download is
 * streamed into a file the runtime creates exclusively through the workspace's open folders, so
 * neither a name taken a moment ago nor a folder swapped for a link can send it elsewhere.
 */
import { basename, extname } from 'node:path';
import type { Download } from 'playwright-core';
import { ToolError } from 'manus-runtime';
import { errorMessage } from './browser-errors.js';
import type { WorkspaceFiles } from './workspace-files.js';
import { withTimeout } from './time-limit.js';

export interface DownloadReport {
  /** Workspace-relative paths of the files saved. */
  files: string[];
  problems: string[];
}

export class DownloadStore {
  private readonly files: WorkspaceFiles;
  private readonly folder: string;
  private readonly pending = new Set<Promise<void>>();
  private readonly startWaiters: Array<() => void> = [];
  private report: DownloadReport = { files: [], problems: [] };
  private started = 0;

  constructor(files: WorkspaceFiles, folder: string) {
    this.files = files;
    this.folder = folder;
  }

  /** How many downloads have started, so an action can tell whether it started one. */
  get count(): number {
    return this.started;
  }

  save(download: Download): void {
    this.started += 1;
    for (const wake of this.startWaiters.splice(0)) wake();
    const saving = this.saveAs(download).catch((error: unknown) => {
      this.report.problems.push(`${download.suggestedFilename()} (${download.url()}): ${errorMessage(error)}`);
    });
    this.pending.add(saving);
    saving.finally(() => this.pending.delete(saving));
  }

  /** Waits up to `timeoutMs` for a download to start after `count` had started. */
  async waitForStartAfter(count: number, timeoutMs: number): Promise<boolean> {
    if (this.started > count) return true;
    const started = new Promise<void>((resolve) => this.startWaiters.push(resolve));
    return withTimeout(started, timeoutMs, 'waiting for the download').then(() => true, () => false);
  }

  /** Waits for downloads in progress to finish, up to `timeoutMs`. */
  async settle(timeoutMs: number): Promise<void> {
    if (this.pending.size === 0) return;
    await withTimeout(Promise.all(this.pending), timeoutMs, 'downloading').catch(() => undefined);
  }

  /** What finished or failed since the last call. */
  take(): DownloadReport {
    const report = this.report;
    this.report = { files: [], problems: [] };
    return report;
  }

  private async saveAs(download: Download): Promise<void> {
    const folder = await this.files.makeFolder(this.folder);
    const content = await download.createReadStream();
    const safe = basename(download.suggestedFilename()).replace(/[\u0000-\u001f/\\]/g, '_').replace(/^\.+/, '') || 'download';
    const extension = extname(safe);
    const stem = safe.slice(0, safe.length - extension.length);
    // A free name in the folder: `report.csv`, then `report (2).csv`; created exclusively, so two
    // downloads of one name at once each get their own.
    for (let attempt = 1; ; attempt += 1) {
      const name = attempt === 1 ? safe : `${stem} (${attempt})${extension}`;
      const path = folder === '.' ? name : `${folder}/${name}`;
      try {
        this.report.files.push(await this.files.createFile(path, content));
        return;
      } catch (error) {
        if (ToolError.isInstance(error) && error.code === 'file_exists') continue;
        // A download cut off half-way is not left looking like a whole file.
        if (!(ToolError.isInstance(error) && error.code.startsWith('path_'))) await this.files.remove(path).catch(() => undefined);
        throw error;
      }
    }
  }
}
