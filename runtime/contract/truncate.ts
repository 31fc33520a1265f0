/**
 * Head-and-tail truncation for observations. Keeps the start (usually headers, the command's
 * first output) and the end (usually the error or the result) and never splits a surrogate pair.
 */

export interface TruncatedText {
  text: string;
  truncated: boolean;
  omittedCharacters: number;
}

export function truncateMiddle(text: string, limit: number, note = ''): TruncatedText {
  if (limit <= 0 || text.length <= limit) return { text, truncated: false, omittedCharacters: 0 };
  const marker = (omitted: number) => `\n[... ${omitted} characters omitted${note ? `; ${note}` : ''} ...]\n`;
  // The marker's own length depends on the omitted count; one estimate is close enough.
  const budget = Math.max(0, limit - marker(text.length).length);
  const headLength = backToCharacterBoundary(text, Math.ceil(budget * 0.6));
  const tailStart = forwardToCharacterBoundary(text, text.length - (budget - headLength));
  const omitted = tailStart - headLength;
  return {
    text: text.slice(0, headLength) + marker(omitted) + text.slice(tailStart),
    truncated: true,
    omittedCharacters: omitted,
  };
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Moves an end index back so a cut there does not separate a surrogate pair. */
function backToCharacterBoundary(text: string, index: number): number {
  if (index > 0 && index < text.length && isLowSurrogate(text.charCodeAt(index))) return index - 1;
  return index;
}

/** Moves a start index forward so the kept tail does not begin with half a surrogate pair. */
function forwardToCharacterBoundary(text: string, index: number): number {
  if (index > 0 && index < text.length && isLowSurrogate(text.charCodeAt(index))) return index + 1;
  return index;
}
