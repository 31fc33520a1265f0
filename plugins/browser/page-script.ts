/**
 * Scripts that run inside web pages are kept as JavaScript source text. Playwright serialises a
 * function argument with toString(), and transpilers add helper calls to functions (esbuild's
 * keepNames in tsx, coverage counters in tests) that do not exist in the page; source text runs
 * the same whichever tool compiled the runtime.
 */

/** An expression that calls the script's function with a JSON-serialisable argument. */
export function pageScriptCall(source: string, argument: unknown): string {
  return `(${source})(${JSON.stringify(argument ?? null)})`;
}
