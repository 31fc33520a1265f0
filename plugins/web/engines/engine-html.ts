/** Small helpers the HTML-scraping engines share. */
import { acceptLanguage } from '../accept-language.js';
import { parseDocument } from '../page-content.js';

export { parseDocument };

/** An element's text on one line. */
export function textOf(element: Element | null | undefined): string {
  return (element?.textContent ?? '').replace(/\s+/g, ' ').trim();
}

/** Accept-Language as a header record, empty without a language. */
export function languageHeaders(lang: string | undefined, country: string | undefined): Record<string, string> {
  const value = acceptLanguage(lang, country);
  return value ? { 'accept-language': value } : {};
}

export function withParameters(endpoint: string, parameters: Record<string, string | undefined>): URL {
  const url = new URL(endpoint);
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== '') url.searchParams.set(name, value);
  }
  return url;
}
