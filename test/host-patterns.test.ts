import { describe, expect, it } from 'vitest';
import { hostPatternCovers, hostPatternMatches, parseHostPattern, type HostPattern } from '../runtime/services/network/host-patterns.js';

function pattern(text: string): HostPattern {
  const parsed = parseHostPattern(text);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed;
}

describe('host patterns', () => {
  it.each([
    ['api.github.com', 'api.github.com', 443, true],
    ['api.github.com', 'API.GitHub.com.', 443, true],
    ['api.github.com', 'evil-api.github.com', 443, false],
    ['api.github.com', 'api.github.com.evil.org', 443, false],
    ['*.wikipedia.org', 'en.wikipedia.org', 443, true],
    ['*.wikipedia.org', 'a.b.wikipedia.org', 443, true],
    ['*.wikipedia.org', 'wikipedia.org', 443, false],
    ['*.wikipedia.org', 'evilwikipedia.org', 443, false],
    ['pypi.org:443', 'pypi.org', 443, true],
    ['pypi.org:443', 'pypi.org', 80, false],
    ['[::1]:8080', '[::1]', 8080, true],
    ['10.0.0.1', '10.0.0.1', 22, true],
    ['bücher.example', 'xn--bcher-kva.example', 443, true],
    ['*.bücher.example', 'www.xn--bcher-kva.example', 443, true],
    ['bücher.example', 'bucher.example', 443, false],
    ['api.github.com', '\u0430pi.github.com', 443, false],
  ] as const)('%s against %s:%s is %s', (text, host, port, expected) => {
    expect(hostPatternMatches(pattern(text), host, port)).toBe(expected);
  });

  it.each([
    ['https://example.org', 'URL'],
    ['*', "'*' may only stand first"],
    ['exa mple.org', 'not a host name'],
    ['*.org', 'top-level'],
    ['ex*ample.org', "'*' may only stand first"],
    ['example.org:0', 'port'],
    ['::1', 'brackets'],
    ['', 'empty'],
  ])('refuses %j', (text, problem) => {
    const parsed = parseHostPattern(text);
    expect('problem' in parsed && parsed.problem).toContain(problem);
  });
});

describe('one host pattern covering another', () => {
  it.each([
    ['example.org', 'example.org', true],
    ['example.org', 'example.org:443', true],
    ['example.org:443', 'example.org', false],
    ['example.org:443', 'example.org:443', true],
    ['*.example.org', 'api.example.org', true],
    ['*.example.org', '*.eu.example.org', true],
    ['*.example.org', 'example.org', false],
    ['*.example.org', '*.example.org', true],
    ['example.org', '*.example.org', false],
    ['api.example.org', 'other.example.org', false],
  ])('%s covers %s: %s', (outer, inner, expected) => {
    expect(hostPatternCovers(pattern(outer), pattern(inner))).toBe(expected);
  });
});
