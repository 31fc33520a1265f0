/**
 * Text made safe for HTML. Everything a report shows came from the model, a web page, a tool or a
 * file, none of it trusted, so every string goes through `escapeHtml` on its way into the page,
 * in text and in attribute values alike.
 */

const replacements: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => replacements[character]);
}

/** A short one-line preview of a longer text, cut at a character boundary. */
export function previewText(text: string, limit: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const characters = [...line];
  return characters.length > limit ? `${characters.slice(0, limit - 1).join('')}\u2026` : line;
}
