/**
 * Whether an interaction (a click, a key press, a choice in a list) made the page navigate, and
 * waiting for the new page when it did. Playwright's click returns once the events are sent, so
 * without this an action would report the old page while the new one is still on its way.
 */
import type { Frame, Page, Request } from 'playwright-core';

export type NavigationOutcome = 'none' | 'loaded' | 'slow' | 'failed';

/** Long enough for a click's navigation, popup or download to begin; short enough to go unnoticed. */
const startGraceMs = 200;

export class NavigationWatch {
  private readonly page: Page;
  private requested = false;
  private committed = false;
  private failed = false;
  private wake: () => void = () => undefined;

  private readonly onRequest = (request: Request) => {
    if (this.isMainNavigation(request)) this.requested = true;
  };
  private readonly onRequestFailed = (request: Request) => {
    if (!this.isMainNavigation(request)) return;
    this.failed = true;
    this.wake();
  };
  private readonly onNavigated = (frame: Frame) => {
    if (frame !== this.page.mainFrame()) return;
    this.committed = true;
    this.wake();
  };

  constructor(page: Page) {
    this.page = page;
    page.on('request', this.onRequest);
    page.on('requestfailed', this.onRequestFailed);
    page.on('framenavigated', this.onNavigated);
  }

  /** Waits for a navigation the interaction started, up to `timeoutMs`, then stops watching. */
  async settle(timeoutMs: number): Promise<NavigationOutcome> {
    try {
      await new Promise((resolve) => setTimeout(resolve, startGraceMs));
      if (!this.requested && !this.committed) return 'none';
      const deadline = Date.now() + timeoutMs;
      if (!this.committed && !this.failed) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      if (this.failed && !this.committed) return 'failed';
      if (!this.committed) return 'slow';
      const remaining = Math.max(1, deadline - Date.now());
      return await this.page.waitForLoadState('domcontentloaded', { timeout: remaining }).then(() => 'loaded' as const, () => 'slow' as const);
    } finally {
      this.stop();
    }
  }

  stop(): void {
    this.page.off('request', this.onRequest);
    this.page.off('requestfailed', this.onRequestFailed);
    this.page.off('framenavigated', this.onNavigated);
  }

  private isMainNavigation(request: Request): boolean {
    try {
      return request.isNavigationRequest() && request.frame() === this.page.mainFrame();
    } catch {
      // Requests of service workers have no frame.
      return false;
    }
  }
}
