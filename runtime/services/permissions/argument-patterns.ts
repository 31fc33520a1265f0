/**
 * How one rule's pattern matches one argument, by the argument's kind: a path as a glob relative to
 * the workspace, a URL by scheme, host and path, a host by host pattern, anything else as text.
 * Shell commands are parsed instead (shell-command-rules.ts): one pattern cannot judge a command.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';
import type { PermissionArgumentKind } from '../../contract/tool.js';
import { wildcardExpression } from '../../config/permission-rules.js';
import { hostPatternMatches, parseHostPattern, type HostPattern } from '../network/host-patterns.js';

/** How a rule reads an argument: its kind, or `domain` for the host of a URL argument. */
export type ArgumentReading = Exclude<PermissionArgumentKind, 'command'> | 'url-domain';

/** Why a pattern can never match an argument of this kind, for `manus validate`. */
export function argumentPatternProblem(reading: ArgumentReading, pattern: string): string | undefined {
  if (reading === 'domain' || reading === 'url-domain') {
    const host = parseHostPattern(pattern);
    return 'problem' in host ? host.problem : undefined;
  }
  if (reading === 'url') {
    const parsed = parseUrlPattern(pattern);
    return 'problem' in parsed ? parsed.problem : undefined;
  }
  return undefined;
}

/** Whether the argument's value matches; a value of the wrong type or an unreadable URL never does. */
export function argumentMatches(reading: ArgumentReading, pattern: string, value: unknown, workspace: string): boolean {
  if (typeof value !== 'string') return false;
  switch (reading) {
    case 'path': {
      const path = workspacePath(value, workspace, isAbsolute(pattern));
      // A relative pattern is about the workspace: a path that leads out of it is never one of its files.
      if (!isAbsolute(pattern) && path.startsWith('/')) return false;
      return pathMatcher(pattern)(path);
    }
    case 'domain':
      return hostMatches(pattern, value);
    case 'url-domain': {
      const url = readUrl(value);
      return url !== undefined && hostMatches(pattern, url.hostname, portOf(url));
    }
    case 'url':
      return urlMatches(pattern, value);
    case 'text':
      return wildcardExpression(pattern).test(value);
  }
}

/**
 * A path as rules see it: relative to the workspace, with `/` separators, `..` and `.` resolved; or
 * absolute when it leads outside the workspace or the pattern is absolute.
 */
export function workspacePath(value: string, workspace: string, absolute: boolean): string {
  const full = resolve(workspace, value);
  const inside = relative(workspace, full);
  if (absolute || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return full.split(sep).join('/');
  return inside.split(sep).join('/');
}

const pathMatchers = new Map<string, (path: string) => boolean>();

function pathMatcher(pattern: string): (path: string) => boolean {
  let matcher = pathMatchers.get(pattern);
  if (!matcher) {
    // Dot files too: `docs/**` covers docs/.env; a rule is about the folder, not about what is shown.
    matcher = picomatch(pattern.replace(/^\.\//, ''), { dot: true });
    pathMatchers.set(pattern, matcher);
  }
  return matcher;
}

const hostPatterns = new Map<string, HostPattern | undefined>();

function hostMatches(pattern: string, host: string, port?: number): boolean {
  if (!hostPatterns.has(pattern)) {
    const parsed = parseHostPattern(pattern);
    hostPatterns.set(pattern, 'problem' in parsed ? undefined : parsed);
  }
  const parsed = hostPatterns.get(pattern);
  return parsed !== undefined && hostPatternMatches(parsed, host, port);
}

interface UrlPattern {
  scheme: string;
  host: HostPattern;
  /** Path, query and fragment, with `*` for any characters; absent: any. */
  rest?: string;
}

const urlPatterns = new Map<string, UrlPattern | { problem: string }>();

function parseUrlPattern(pattern: string): UrlPattern | { problem: string } {
  const known = urlPatterns.get(pattern);
  if (known) return known;
  const parsed = readUrlPattern(pattern);
  urlPatterns.set(pattern, parsed);
  return parsed;
}

function readUrlPattern(pattern: string): UrlPattern | { problem: string } {
  const match = /^([a-z][a-z0-9+.-]*|\*):\/\/([^/?#]+)(.*)$/i.exec(pattern);
  if (!match) return { problem: `'${pattern}' is not a URL pattern; write one such as https://*.example.org/* (or use domain=)` };
  const host = parseHostPattern(match[2]);
  if ('problem' in host) return { problem: `in '${pattern}': ${host.problem}` };
  return { scheme: match[1].toLowerCase(), host, rest: match[3] === '' || match[3] === '/*' ? undefined : match[3] };
}

function urlMatches(pattern: string, value: string): boolean {
  const parsed = parseUrlPattern(pattern);
  const url = readUrl(value);
  if ('problem' in parsed || !url) return false;
  const scheme = url.protocol.slice(0, -1);
  if (parsed.scheme !== '*' && parsed.scheme !== scheme) return false;
  // A URL with a user name is read by its host; the user part cannot pass for a host.
  if (!hostPatternMatches(parsed.host, url.hostname, portOf(url))) return false;
  return parsed.rest === undefined || wildcardExpression(parsed.rest).test(`${url.pathname}${url.search}${url.hash}`);
}

function readUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

const defaultPorts: Record<string, number> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443, 'ftp:': 21 };

function portOf(url: URL): number | undefined {
  return url.port === '' ? defaultPorts[url.protocol] : Number(url.port);
}
