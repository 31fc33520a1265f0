/**
 * Turns a web page into markdown a model can read: the main content only, with headings, lists,
 * tables, code blocks and links kept (links as absolute URLs), plus the page's title and links.
 */
import { truncateMiddle } from 'manus-runtime';
import { htmlLibraries } from './html-libraries.js';
import { addMarkdownRules } from './markdown-rules.js';
import { extractPageContent, parseDocument } from './page-content.js';

export interface HtmlToMarkdownOptions {
  /** The page's address: relative links and images resolve against it (or the page's <base>). */
  url?: string;
  /** Longest markdown returned; a longer one keeps its head and tail. */
  maxCharacters?: number;
}

export interface PageLink {
  text: string;
  url: string;
}

export interface MarkdownPage {
  title: string;
  markdown: string;
  /** Links in the main content, in page order, one per URL. */
  links: PageLink[];
}

export function htmlToMarkdown(html: string, options: HtmlToMarkdownOptions = {}): MarkdownPage {
  const document = parseDocument(html);
  const { title, root } = extractPageContent(document, options.url);
  const links = collectLinks(root);
  const { TurndownService } = htmlLibraries();
  const service = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    hr: '---',
  });
  addMarkdownRules(service);
  let markdown = tidy(service.turndown(root as unknown as HTMLElement));
  if (options.maxCharacters !== undefined && markdown.length > options.maxCharacters) {
    markdown = truncateMiddle(markdown, options.maxCharacters, 'page shortened').text;
  }
  return { title, markdown, links };
}

function collectLinks(root: Element): PageLink[] {
  const byUrl = new Map<string, PageLink>();
  for (const anchor of root.querySelectorAll('a[href]')) {
    const url = anchor.getAttribute('href') ?? '';
    if (!/^https?:/i.test(url)) continue;
    const text = (anchor.textContent ?? '').replace(/\s+/g, ' ').trim();
    const known = byUrl.get(url);
    if (!known) byUrl.set(url, { text, url });
    else if (!known.text && text) known.text = text;
  }
  return [...byUrl.values()];
}

function tidy(markdown: string): string {
  return markdown
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
