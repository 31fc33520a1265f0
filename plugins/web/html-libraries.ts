/**
 * The HTML libraries, loaded on first use: most runs never convert a page, and parsing these
 * modules at start-up would slow every command. Each has a CommonJS build, so a synchronous
 * require keeps `htmlToMarkdown` synchronous for its callers.
 */
import { createRequire } from 'node:module';
import type TurndownService from 'turndown';
import type { Readability } from '@mozilla/readability';

type ParseHtml = (html: string) => { document: Document };

interface HtmlLibraries {
  parseHTML: ParseHtml;
  TurndownService: typeof TurndownService;
  Readability: typeof Readability;
}

let loaded: HtmlLibraries | undefined;

export function htmlLibraries(): HtmlLibraries {
  if (!loaded) {
    const load = createRequire(import.meta.url);
    loaded = {
      parseHTML: (load('linkedom') as { parseHTML: ParseHtml }).parseHTML,
      TurndownService: load('turndown') as typeof TurndownService,
      Readability: (load('@mozilla/readability') as { Readability: typeof Readability }).Readability,
    };
  }
  return loaded;
}
