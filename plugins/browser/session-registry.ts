/**
 * The run's browser session, kept in the run's resources under 'browser' so the kernel closes it
 * at the end of the run and on Ctrl-C. The state provider and extract_content must find the
 * session without starting one, which `resources.get` cannot do, so sessions are also indexed
 * here by the run's resource registry (weakly: nothing outlives the run).
 */
import type { ToolContext } from 'manus-runtime';
import { BrowserSession } from './browser-session.js';
import { readBrowserSettings } from './browser-settings.js';

export const browserResourceKey = 'browser';

const sessions = new WeakMap<ToolContext['resources'], BrowserSession>();
const stateProviders = new WeakSet<ToolContext['resources']>();

/** The run's browser session, started with the calling tool's settings on first use. */
export async function browserSessionFor(context: Pick<ToolContext, 'resources' | 'settings' | 'files' | 'network'>): Promise<BrowserSession> {
  const { resources } = context;
  const settings = readBrowserSettings(context.settings);
  const current = sessions.get(resources);
  // A browser that crashed or was closed from outside is replaced, not reused.
  if (current && !current.usable) await resources.release(browserResourceKey);
  return resources.get(
    browserResourceKey,
    async () => {
      const session = await BrowserSession.start(settings, context.files, context.network);
      sessions.set(resources, session);
      return session;
    },
    async (session) => {
      if (sessions.get(resources) === session) sessions.delete(resources);
      await session.close();
    },
  );
}

/** The run's session if a browser is already running; never starts one. */
export function existingBrowserSession(resources: ToolContext['resources']): BrowserSession | undefined {
  const session = sessions.get(resources);
  return session?.usable ? session : undefined;
}

/**
 * The browser_state provider calls this on every render. While it is active the model sees the
 * element list each step, so browser_use keeps its results short; without it, browser_use adds
 * the list to its results, so elements are never clicked blind.
 */
export function markStateProviderActive(resources: ToolContext['resources']): void {
  stateProviders.add(resources);
}

export function isStateProviderActive(resources: ToolContext['resources']): boolean {
  return stateProviders.has(resources);
}
