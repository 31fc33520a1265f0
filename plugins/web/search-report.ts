/** The text a search hands the model: the engine used, engines that failed, then each result. */
import type { SearchOutcome } from './search-web.js';

export function formatSearchOutcome(query: string, outcome: SearchOutcome): string {
  const lines = [`Search results for "${query}" from ${outcome.engine}:`];
  if (outcome.failures.length > 0) {
    lines.push(`(Tried first and failed: ${outcome.failures.map((failure) => `${failure.engine}: ${failure.reason}`).join('; ')}.)`);
  }
  outcome.results.forEach((result, index) => {
    lines.push('', `${index + 1}. ${result.title}`, `   ${result.url}`);
    if (result.snippet) lines.push(`   ${result.snippet}`);
    if (result.content !== undefined) lines.push('   Page content:', indent(result.content || '(the page has no text)'));
    if (result.contentError) lines.push(`   Page content could not be read: ${result.contentError}`);
  });
  return lines.join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line ? `      ${line}` : ''))
    .join('\n');
}
