/** The Accept-Language value for a language and an optional country, e.g. `de-DE,de;q=0.9`. */
export function acceptLanguage(lang: string | undefined, country: string | undefined): string | undefined {
  if (!lang) return undefined;
  return country ? `${lang}-${country.toUpperCase()},${lang};q=0.9` : lang;
}
