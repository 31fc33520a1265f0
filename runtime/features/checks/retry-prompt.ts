/**
 * The message that starts a retry: which checks failed and what they printed. Each failure's
 * detail and the whole text are bounded, so a check that prints megabytes cannot flood the
 * model's context.
 */
import { truncateMiddle } from '../../contract/truncate.js';
import { failedChecks, type CheckResult } from '../../config/check-types.js';

const detailLimitCharacters = 2000;
const promptLimitCharacters = 8000;

export function retryPrompt(failures: readonly CheckResult[]): string {
  const failed = failedChecks(failures);
  const items = failed.map((failure, index) => {
    const detail = truncateMiddle(failure.detail, detailLimitCharacters, 'shortened').text;
    return `${index + 1}. ${failure.name} (${failure.kind} check)\n${indent(detail)}`;
  });
  const text = [
    `Your previous attempt finished, but ${failed.length === 1 ? 'one of the recipe\'s checks' : `${failed.length} of the recipe's checks`} failed:`,
    '',
    items.join('\n\n'),
    '',
    'Fix these problems so that the checks pass, then finish again.',
  ].join('\n');
  return truncateMiddle(text, promptLimitCharacters, 'the list of failures was shortened').text;
}

function indent(text: string): string {
  return text.split('\n').map((line) => `   ${line}`).join('\n');
}
