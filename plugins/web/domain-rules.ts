/**
 * Which hosts web tools may reach, from `allowed_domains` and `blocked_domains` settings. A rule
 * names a domain and covers its subdomains; a block wins over an allow. Applied to the first URL
 * and to every redirect hop, so a permitted page cannot bounce a request somewhere forbidden.
 */
import { WebError } from './web-errors.js';

export interface DomainRules {
  allowed: string[];
  blocked: string[];
}

export function readDomainRules(settings: Record<string, unknown>): DomainRules {
  return { allowed: domainList(settings.allowed_domains), blocked: domainList(settings.blocked_domains) };
}

function domainList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const entries = Array.isArray(value) ? value : [value];
  return entries.map((entry) => normalizeDomain(String(entry))).filter(Boolean);
}

/** Accepts `example.com`, `.example.com`, `*.example.com` and full URLs alike. */
function normalizeDomain(entry: string): string {
  let domain = entry.trim().toLowerCase();
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(domain)) {
    try {
      domain = new URL(domain).hostname;
    } catch {
      return '';
    }
  }
  return domain.replace(/^\*?\./, '').replace(/\.$/, '');
}

function hostMatches(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/** Parses a URL a web tool was asked to reach; only http and https are allowed. */
export function parseWebUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new WebError('web_url_invalid', `"${text}" is not a valid URL; give an absolute http(s) URL such as https://example.com/page.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebError('web_url_invalid', `Only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, '')}.`);
  }
  return url;
}

export function checkDomainAllowed(url: URL, rules: DomainRules): void {
  const host = url.hostname.toLowerCase().replace(/\.$/, '').replace(/^\[|\]$/g, '');
  const blockedBy = rules.blocked.find((domain) => hostMatches(host, domain));
  if (blockedBy) {
    throw new WebError('web_domain_blocked', `${url.href} is refused: the domain ${blockedBy} is in blocked_domains.`);
  }
  if (rules.allowed.length > 0 && !rules.allowed.some((domain) => hostMatches(host, domain))) {
    throw new WebError('web_domain_blocked', `${url.href} is refused: ${host} is not in allowed_domains (${rules.allowed.join(', ')}).`);
  }
}
