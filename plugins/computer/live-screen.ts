/**
 * The run's live screen: the latest screenshot of the desktop, kept as `live-screen.png` in the
 * run's folder, where `manus view --serve` shows it. It is taken again every few seconds while the
 * desktop runs, and after each action; a refresh due while another is under way is skipped.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Desktop } from './desktop.js';

/** The name `manus view --serve` looks for in a run's folder. */
export const liveScreenFileName = 'live-screen.png';

export class LiveScreen {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private latest: Buffer | undefined;
  private stopped = false;

  constructor(
    private readonly desktop: Desktop,
    private readonly runDirectory: string,
    intervalSeconds: number,
  ) {
    if (intervalSeconds > 0) {
      this.timer = setInterval(() => void this.refresh(), intervalSeconds * 1000);
      this.timer.unref();
    }
  }

  /** The last screenshot taken, for the watch page. */
  get picture(): Buffer | undefined {
    return this.latest;
  }

  /** Takes a screenshot now, unless one is being taken; a failure leaves the last picture. */
  async refresh(): Promise<void> {
    if (this.busy || this.stopped || !this.desktop.running) return;
    this.busy = true;
    try {
      await this.keep(await this.desktop.screenshot());
    } catch {
      // The next action reports a broken desktop to the model; the picture only waits for it.
    } finally {
      this.busy = false;
    }
  }

  /** Keeps a screenshot an action took, so none is taken twice. */
  async keep(png: Buffer): Promise<void> {
    if (this.stopped) return;
    this.latest = png;
    // Written beside the file and renamed over it, so a reader never gets half a picture.
    const partial = join(this.runDirectory, `.${liveScreenFileName}.${randomBytes(6).toString('hex')}`);
    try {
      await writeFile(partial, png, { flag: 'wx', mode: 0o600 });
      await rename(partial, join(this.runDirectory, liveScreenFileName));
    } catch {
      await rm(partial, { force: true });
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }
}
