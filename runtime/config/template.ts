/**
 * Prompt templates: `{{name}}` placeholders filled from recipe parameters. Deliberately tiny: no
 * logic in templates, so a recipe's prompt reads as the text the model will get. Anything else
 * between `{{` and `}}` is no placeholder the language knows, and validation rejects it rather than
 * let it reach the model as literal text.
 */

const placeholderPattern = /\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g;
const anythingInBracesPattern = /\{\{([\s\S]*?)\}\}/g;
const plainNamePattern = /^\s*[A-Za-z_][A-Za-z0-9_-]*\s*$/;

export interface TemplatePlaceholder {
  name: string;
  /** Offset of the placeholder in the template text. */
  offset: number;
}

export function templatePlaceholders(template: string): TemplatePlaceholder[] {
  return [...template.matchAll(placeholderPattern)].map((match) => ({ name: match[1], offset: match.index ?? 0 }));
}

/** The `{{...}}` forms that are not a placeholder: `{{p.x}}`, `{{ a b }}`, `{{}}`. */
export function unknownPlaceholderForms(template: string): Array<{ text: string; offset: number }> {
  return [...template.matchAll(anythingInBracesPattern)]
    .filter((match) => !plainNamePattern.test(match[1]))
    .map((match) => ({ text: match[0], offset: match.index ?? 0 }));
}

/** Fills the placeholders; a list parameter goes in as JSON. */
export function renderTemplate(template: string, values: Record<string, string | number | boolean | string[]>): string {
  return template.replace(placeholderPattern, (_whole, name: string) => {
    const value = values[name];
    return Array.isArray(value) ? JSON.stringify(value) : String(value);
  });
}
