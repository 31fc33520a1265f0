/**
 * The regular expressions of `matches` and `answer_matches`. They are searched for anywhere in the
 * text, and `^` and `$` match at line boundaries, because checks look at files and answers that
 * span many lines.
 */

export function compileCheckPattern(pattern: string): RegExp {
  return new RegExp(pattern, 'm');
}

/** The problem with a pattern, or undefined when it compiles. */
export function patternProblem(pattern: string): string | undefined {
  try {
    compileCheckPattern(pattern);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
