/**
 * Host patterns, as an egress allowlist and a `domain=` permission rule write them:
 * `api.github.com`, `*.wikipedia.org`, `pypi.org:443`, `[::1]:8080`. One reading for both, so a host
 * a rule allows is the host the network lets through.
 */
import { domainToASCII } from 'node:url';

export interface HostPattern {
  /** Lower case, without a trailing dot or IPv6 brackets. */
  host: string;
  /** `*.example.org`: any name below example.org, never example.org itself. */
  subdomains: boolean;
  /** Absent: every port. */
  port?: number;
  /** As written, for messages. */
  text: string;
}

const hostLabel = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** Reads one pattern, or says why it is not one. */
export function parseHostPattern(text: string): HostPattern | { problem: string } {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === '') return { problem: 'a host pattern is empty' };
  if (trimmed.includes('://') || trimmed.includes('/')) return { problem: `'${text}' is a URL; write only the host, such as 'example.org' or 'example.org:443'` };
  let rest = trimmed;
  let port: number | undefined;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) return { problem: `'${text}' opens '[' without closing it` };
    const after = rest.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) return { problem: `'${text}' has text after ']' that is not a port` };
    if (after !== '') port = Number(after.slice(1));
    rest = rest.slice(1, close);
    if (!rest.includes(':')) return { problem: `'${text}': brackets are only for IPv6 addresses` };
    if (port !== undefined && !validPort(port)) return { problem: `'${text}' has a port outside 1-65535` };
    return { host: rest, subdomains: false, port, text };
  }
  const colon = rest.lastIndexOf(':');
  if (colon >= 0) {
    if (rest.indexOf(':') !== colon) return { problem: `'${text}': write an IPv6 address in brackets, such as '[::1]:443'` };
    port = Number(rest.slice(colon + 1));
    if (!validPort(port)) return { problem: `'${text}' has a port outside 1-65535` };
    rest = rest.slice(0, colon);
  }
  rest = asciiHost(rest).replace(/\.$/, '');
  if (rest === '') return { problem: `'${text}' is not a host name` };
  const subdomains = rest.startsWith('*.');
  if (subdomains) rest = rest.slice(2);
  if (rest.includes('*')) return { problem: `'${text}': '*' may only stand first, as in '*.example.org'` };
  const labels = rest.split('.');
  if (labels.some((label) => !hostLabel.test(label))) return { problem: `'${text}' is not a host name` };
  if (subdomains && labels.length < 2) return { problem: `'${text}' would match a whole top-level domain` };
  return { host: rest, subdomains, port, text };
}

/** Whether a host (a name or an address, as a URL gives it) and port fall under a pattern. */
export function hostPatternMatches(pattern: HostPattern, host: string, port?: number): boolean {
  if (pattern.port !== undefined && pattern.port !== port) return false;
  const name = normalizeHost(host);
  if (!pattern.subdomains) return name === pattern.host;
  return name.endsWith(`.${pattern.host}`);
}

/**
 * Whether every host and port `inner` matches is matched by `outer` too: a user's `*.example.org`
 * covers a recipe's `api.example.org` and `*.eu.example.org`, and a pattern without a port covers
 * one with a port, never the other way round.
 */
export function hostPatternCovers(outer: HostPattern, inner: HostPattern): boolean {
  if (outer.port !== undefined && outer.port !== inner.port) return false;
  if (!outer.subdomains) return !inner.subdomains && inner.host === outer.host;
  return inner.host.endsWith(`.${outer.host}`) || (inner.subdomains && inner.host === outer.host);
}

/**
 * Lower case, no trailing dot, no IPv6 brackets, an international name in its punycode form (as a
 * URL and a resolver give it): the form patterns are compared in.
 */
export function normalizeHost(host: string): string {
  const lower = asciiHost(host.trim().toLowerCase()).replace(/\.$/, '');
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

/**
 * `bücher.example` as `xn--bcher-kva.example`, the one form a connection uses; a name that has no
 * such form (an invalid one) becomes `''`, which no pattern matches and no pattern may be.
 */
function asciiHost(host: string): string {
  return /[^\x00-\x7f]/.test(host) ? domainToASCII(host) : host;
}

function validPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}
