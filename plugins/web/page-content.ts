/**
 * Finds the part of a parsed page worth reading: drops what is never content (scripts, styles,
 * navigation, page headers and footers, sidebars, search forms, cookie banners, hidden elements),
 * resolves links and images to absolute URLs, and picks <main> or a lone <article> when the page
 * marks its content, falling back to Readability and then to the whole body.
 */
import { htmlLibraries } from './html-libraries.js';

const alwaysDropped = [
  'script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas', 'link', 'meta',
  'nav', 'aside', 'dialog', 'button', 'input', 'select', 'textarea',
  '[hidden]', '[aria-hidden="true"]', '[role="navigation"]', '[role="complementary"]', '[role="search"]',
  '[role="dialog"]', '[role="alertdialog"]',
].join(',');

const bannerPattern = /cookie|consent|gdpr|onetrust|cc-banner|newsletter-popup/i;
const hiddenStylePattern = /(display\s*:\s*none|visibility\s*:\s*hidden)/i;
/** A cookie notice is short; an element named like one but holding a long text is content. */
const bannerMaximumCharacters = 1500;
/** Readability's pick is used only when it keeps at least this share of the page's text. */
const readabilityMinimumShare = 0.25;
/**
 * Below this much text a page (already without navigation and sidebars) is kept whole:
 * Readability is for long pages and rewrites what it keeps (it turns <h1> into <h2>).
 */
const readabilityMinimumCharacters = 500;

export interface PageContent {
  title: string;
  /** The element holding the content, already cleaned. */
  root: Element;
}

export function parseDocument(html: string): Document {
  const { parseHTML } = htmlLibraries();
  // linkedom makes the first element of a fragment the document element; a full document keeps
  // <body> and <title> where they belong.
  const source = /<html[\s>]/i.test(html) ? html : `<!DOCTYPE html><html><head></head><body>${html}</body></html>`;
  return parseHTML(source).document;
}

export function extractPageContent(document: Document, pageUrl: string | undefined): PageContent {
  const baseUrl = baseUrlOf(document, pageUrl);
  const title = pageTitle(document);
  absolutizeUrls(document, baseUrl);
  removeNoise(document);
  const root = markedContent(document) ?? readableContent(document) ?? document.body ?? document.documentElement;
  removeFormsAround(root);
  return { title, root };
}

function baseUrlOf(document: Document, pageUrl: string | undefined): string | undefined {
  const declared = document.querySelector('base[href]')?.getAttribute('href');
  if (declared) {
    const resolved = resolveUrl(declared, pageUrl);
    if (resolved) return resolved;
  }
  return pageUrl;
}

function pageTitle(document: Document): string {
  const candidates = [
    document.querySelector('title')?.textContent,
    document.querySelector('meta[property="og:title"]')?.getAttribute('content'),
    document.querySelector('h1')?.textContent,
  ];
  for (const candidate of candidates) {
    const title = candidate?.replace(/\s+/g, ' ').trim();
    if (title) return title;
  }
  return '';
}

export function resolveUrl(href: string, baseUrl: string | undefined): string | undefined {
  try {
    return new URL(href.trim(), baseUrl).href;
  } catch {
    return undefined;
  }
}

function absolutizeUrls(document: Document, baseUrl: string | undefined): void {
  for (const anchor of document.querySelectorAll('a[href]')) {
    const href = anchor.getAttribute('href') ?? '';
    const resolved = href.trim().startsWith('#') ? undefined : resolveUrl(href, baseUrl);
    if (resolved && /^(https?|mailto|ftp):/i.test(resolved)) anchor.setAttribute('href', resolved);
    // Script and fragment-only links lead nowhere a reader can follow; keep their text only.
    else anchor.removeAttribute('href');
  }
  for (const image of document.querySelectorAll('img')) {
    const source = image.getAttribute('src') ?? image.getAttribute('data-src') ?? '';
    const resolved = source.startsWith('data:') ? undefined : resolveUrl(source, baseUrl);
    if (resolved && /^https?:/i.test(resolved)) image.setAttribute('src', resolved);
    else image.remove();
  }
}

function removeNoise(document: Document): void {
  for (const element of document.querySelectorAll(alwaysDropped)) element.remove();
  for (const element of document.querySelectorAll('[style]')) {
    if (hiddenStylePattern.test(element.getAttribute('style') ?? '')) element.remove();
  }
  for (const element of document.querySelectorAll('[id],[class]')) {
    const names = `${element.getAttribute('id') ?? ''} ${element.getAttribute('class') ?? ''}`;
    if (bannerPattern.test(names) && textLength(element) <= bannerMaximumCharacters) element.remove();
  }
  // Page-level headers and footers are site chrome; an article's own header holds its title.
  for (const element of document.querySelectorAll('header, footer, [role="banner"], [role="contentinfo"]')) {
    const insideContent = element.parentElement?.closest('article, main, [role="main"]');
    const isFooter = element.matches('footer, [role="contentinfo"]');
    if (!insideContent || isFooter) element.remove();
  }
}

function markedContent(document: Document): Element | undefined {
  const main = document.querySelector('main, [role="main"]');
  if (main && textLength(main) > 0) return main;
  const articles = document.querySelectorAll('article');
  if (articles.length === 1 && textLength(articles[0]) > 0) return articles[0];
  return undefined;
}

/** Readability on a copy, because it rewrites the document it reads. */
function readableContent(document: Document): Element | undefined {
  const body = document.body;
  if (!body || textLength(body) < readabilityMinimumCharacters) return undefined;
  const { Readability } = htmlLibraries();
  const copy = parseDocument(`<!DOCTYPE html><html><head></head><body>${body.innerHTML}</body></html>`);
  let article: ReturnType<InstanceType<typeof Readability>['parse']>;
  try {
    article = new Readability(copy, { charThreshold: readabilityMinimumCharacters }).parse();
  } catch {
    return undefined;
  }
  if (!article?.content || (article.textContent?.length ?? 0) < textLength(body) * readabilityMinimumShare) return undefined;
  return parseDocument(`<!DOCTYPE html><html><head></head><body>${article.content}</body></html>`).body ?? undefined;
}

/**
 * Search boxes and sign-up forms are dropped, but a form that holds most of the page's text is a
 * page-wide wrapper (as ASP.NET pages use), so its content stays.
 */
function removeFormsAround(root: Element): void {
  const total = textLength(root);
  for (const form of root.querySelectorAll('form')) {
    if (textLength(form) < total * 0.5) form.remove();
  }
}

function textLength(element: Element): number {
  return (element.textContent ?? '').replace(/\s+/g, ' ').trim().length;
}
