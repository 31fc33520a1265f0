/**
 * Result pages link through the engine's own redirectors; the model wants the destination.
 * DuckDuckGo puts it in `uddg=`, Google in `/url?q=` (or `url=`), Bing in `ck/a?u=` as
 * "a1" followed by URL-safe base64.
 */

export function unwrapResultUrl(href: string | null | undefined, pageUrl: URL): string | undefined {
  if (!href) return undefined;
  let url: URL;
  try {
    url = new URL(href.trim(), pageUrl);
  } catch {
    return undefined;
  }
  const destination = redirectDestination(url);
  if (destination !== undefined) return destination;
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}

function redirectDestination(url: URL): string | undefined {
  const parameters = url.searchParams;
  if (parameters.has('uddg')) return httpUrl(parameters.get('uddg'));
  if (url.pathname === '/url') return httpUrl(parameters.get('q') ?? parameters.get('url'));
  if (url.pathname === '/ck/a' && parameters.has('u')) return httpUrl(decodeBingTarget(parameters.get('u') ?? ''));
  return undefined;
}

function decodeBingTarget(value: string): string {
  if (!value.startsWith('a1')) return value;
  return Buffer.from(value.slice(2), 'base64url').toString('utf8');
}

function httpUrl(value: string | null): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** One key per page: http and https alike, no fragment, lower-case host, no trailing slash on the path. */
export function resultKey(address: string): string {
  try {
    const url = new URL(address);
    url.hash = '';
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : '';
    return `${url.host.toLowerCase()}${path}${url.search}`;
  } catch {
    return address;
  }
}
