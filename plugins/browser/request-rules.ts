/**
 * Holds the browser's requests to the rules: file: URLs only inside the workspace, and, when
 * domain rules are set, http(s) and WebSocket requests only to allowed hosts; unless the user
 * allows private addresses, no request to a host that is or resolves to one. Refused tab
 * navigations are reported, so the action's result can say what was stopped and why.
 *
 * Chromium follows redirects without asking the route again, so a redirect into a refused host
 * is caught after the fact by checking where each tab ended up (see action-report.ts). Chromium
 * also resolves names itself, after the check here: a name that answers a public address to the
 * check and a private one to Chromium (DNS rebinding) is not stopped by these rules.
 */
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page, Request, Route, WebSocketRoute } from 'playwright-core';
import { errorMessage } from './browser-errors.js';
import { ManusError } from 'manus-runtime';
import type { DomainRules } from './domain-rules.js';
import { mediaTypeOf, type WorkspaceFiles } from './workspace-files.js';

export interface RefusedNavigation {
  url: string;
  reason: string;
  /** The tab's page; unknown for the first navigation of a tab that is still opening. */
  page?: Page;
}

export interface RequestRuleOptions {
  files: WorkspaceFiles;
  domainRules: DomainRules;
  /** Refuses a host that is or resolves to a private address; absent when the user allows them. */
  checkHost?: (hostname: string) => Promise<void>;
  onRefused(navigation: RefusedNavigation): void;
}

type RuleTarget = BrowserContext | Page;

/**
 * file: pages may show workspace files only. Installed when the first file: URL is opened:
 * until then no page can reach a file (web pages may not link to files), and a browser
 * without routes runs faster, since every routed request makes a round trip to Node.
 */
export async function confineFileUrls(target: RuleTarget, options: RequestRuleOptions): Promise<void> {
  await target.route(/^file:/, async (route) => {
    const url = route.request().url();
    const reason = fileUrlRefusal(options.files, url);
    if (reason) return refuse(route, reason, 'accessdenied', options);
    // Served by the runtime through the workspace's open folders: Chromium opening the path
    // itself could be sent outside by a folder swapped for a link after the check.
    const path = fileURLToPath(url);
    const body = await options.files.readFile(path).catch((error: unknown) => error as Error);
    if (body instanceof Error) return refuse(route, `file: URLs may only show files inside the workspace (${errorMessage(body)})`, 'accessdenied', options);
    return route.fulfill({ status: 200, body, contentType: mediaTypeOf(path) }).catch(() => undefined);
  });
}

/** http(s), ftp and WebSocket requests only to hosts the domain rules and the network allow. */
export async function enforceDomainRules(target: RuleTarget, options: RequestRuleOptions): Promise<void> {
  await target.route(/^(https?|ftp):/, async (route) => {
    const reason = await requestRefusal(route.request().url(), options);
    return reason ? refuse(route, reason, 'blockedbyclient', options) : route.continue().catch(() => undefined);
  });
  await target.routeWebSocket(/.*/, async (socket: WebSocketRoute) => {
    const reason = await requestRefusal(socket.url(), options);
    if (reason) socket.close({ code: 1008, reason: 'blocked by the browser request rules' }).catch(() => undefined);
    else socket.connectToServer();
  });
}

/** Why a request to `url` is refused, by the domain rules or for its private address. */
export async function requestRefusal(url: string, options: Pick<RequestRuleOptions, 'domainRules' | 'checkHost'>): Promise<string | undefined> {
  const byDomain = options.domainRules.refusal(url);
  if (byDomain || !options.checkHost) return byDomain;
  let host: string;
  try {
    const parsed = new URL(url);
    if (!['http:', 'https:', 'ws:', 'wss:', 'ftp:'].includes(parsed.protocol)) return undefined;
    host = parsed.hostname;
  } catch {
    return undefined;
  }
  try {
    await options.checkHost(host);
    return undefined;
  } catch (error) {
    // A name that does not resolve fails in the browser as it would anyway.
    return ManusError.isInstance(error) && error.code === 'network_private_address' ? error.message : undefined;
  }
}

function refuse(route: Route, reason: string, errorCode: 'accessdenied' | 'blockedbyclient', options: RequestRuleOptions): Promise<void> {
  const request = route.request();
  if (isTopLevelNavigation(request)) options.onRefused({ url: request.url(), reason, page: pageOf(request) });
  return route.abort(errorCode).catch(() => undefined);
}

/**
 * Why a file: URL may not be opened, or undefined when it names a path inside the workspace. The
 * file itself is checked again, link by link, when it is read to be served.
 */
export function fileUrlRefusal(files: WorkspaceFiles, url: string): string | undefined {
  try {
    files.relativePath(fileURLToPath(url));
    return undefined;
  } catch (error) {
    return `file: URLs may only show files inside the workspace (${errorMessage(error)})`;
  }
}

/** The page a request belongs to; unknown while a new tab is still opening. */
export function pageOf(request: Request): Page | undefined {
  try {
    return request.frame().page();
  } catch {
    return undefined;
  }
}

/** A tab's own navigation, not a frame's or a resource's: the ones worth telling the model about. */
function isTopLevelNavigation(request: Request): boolean {
  if (!request.isNavigationRequest()) return false;
  try {
    return request.frame().parentFrame() === null;
  } catch {
    // The first navigation of a new tab comes before its frame exists.
    return true;
  }
}
