/**
 * Recognises an engine refusing to answer (a captcha, a consent wall, a rate limit). A blocked
 * engine is not retried: asking again at once gets the same wall, so the search moves on.
 */

export class EngineBlockedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'EngineBlockedError';
  }
}

const wallPatterns: Array<[RegExp, string]> = [
  [/unusual traffic|\/sorry\/index|detected unusual/i, 'unusual-traffic page'],
  [/captcha|are you a robot|verify (that )?you are (a )?human|not a robot|challenge-form|anomaly-modal|bots use duckduckgo/i, 'captcha page'],
  [/before you continue to google|consent\.google\.|consent\.youtube\./i, 'cookie consent page'],
  // Baidu's "security check" title, escaped: the bundle must stay ASCII (scripts/bundle.mjs).
  [/\u767e\u5ea6\u5b89\u5168\u9a8c\u8bc1|wappass\.baidu\.com/i, 'captcha page'],
];

/**
 * Names the wall a result page shows, if any. Called only when a page gave no results, so a
 * result that merely mentions captchas does not count.
 */
export function detectWall(response: { url: URL; text: string }): string | undefined {
  const host = response.url.hostname;
  if (host.startsWith('consent.')) return 'cookie consent page';
  if (host === 'wappass.baidu.com' || response.url.pathname.startsWith('/sorry/')) return 'captcha page';
  for (const [pattern, reason] of wallPatterns) {
    if (pattern.test(response.text)) return reason;
  }
  return undefined;
}

export function throwIfWalled(response: { url: URL; text: string }, results: unknown[]): void {
  if (results.length > 0) return;
  const wall = detectWall(response);
  if (wall) throw new EngineBlockedError(`blocked: ${wall}`);
}
