/**
 * Which hosts the browser may reach: `allowed_domains` (when not empty, only these and their
 * subdomains) and `blocked_domains` (never these nor their subdomains). Loopback addresses get
 * no exemption, so a rule set written for a site also holds for a service on 127.0.0.1.
 */

export class DomainRules {
  readonly allowed: readonly string[];
  readonly blocked: readonly string[];

  constructor(allowed: readonly string[], blocked: readonly string[]) {
    this.allowed = allowed.map(normaliseDomain);
    this.blocked = blocked.map(normaliseDomain);
  }

  /** Whether any rule is set; without rules no request needs checking. */
  get active(): boolean {
    return this.allowed.length > 0 || this.blocked.length > 0;
  }

  /**
   * Why a request to `url` is refused, or undefined when it may go ahead. Only network schemes
   * are judged: about:, data: and blob: URLs reach no host.
   */
  refusal(url: string): string | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return undefined;
    }
    if (!['http:', 'https:', 'ws:', 'wss:', 'ftp:'].includes(parsed.protocol)) return undefined;
    const host = normaliseHost(parsed.hostname);
    const blockedBy = this.blocked.find((domain) => hostMatches(host, domain));
    if (blockedBy) return `${host} is blocked by blocked_domains (${blockedBy})`;
    if (this.allowed.length > 0 && !this.allowed.some((domain) => hostMatches(host, domain))) {
      return `${host} is not in allowed_domains (${this.allowed.join(', ')})`;
    }
    return undefined;
  }
}

/** A host matches a domain when it is the domain or one of its subdomains. */
export function hostMatches(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/** Accepts `example.com`, `*.example.com`, `.example.com` and `https://example.com/path` alike. */
export function normaliseDomain(entry: string): string {
  let text = entry.trim().toLowerCase();
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(text)) {
    try {
      text = new URL(text).hostname;
    } catch {
      // Not a URL after all: treated as a plain name below.
    }
  }
  text = text.replace(/^\*?\./, '').replace(/\/.*$/, '');
  // A port is dropped; a bare IPv6 address has more than one colon and no port.
  if (text.startsWith('[')) text = text.replace(/^\[(.*)\](?::\d+)?$/, '$1');
  else if (text.split(':').length === 2) text = text.replace(/:\d+$/, '');
  return normaliseHost(text);
}

function normaliseHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '').replace(/^\[(.*)\]$/, '$1');
}
