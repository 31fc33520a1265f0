/**
 * Prompt templates: `{{name}}` placeholders filled from recipe parameters. Deliberately tiny: no
 * logic in templates, so a recipe's prompt reads as the text the model will get.
 */

const placeholderPattern = /\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g;

export interface TemplatePlaceholder {
  name: string;
  /** Offset of the placeholder in the template text. */
  offset: number;
}

export function templatePlaceholders(template: string): TemplatePlaceholder[] {
  return [...template.matchAll(placeholderPattern)].map((match) => ({ name: match[1], offset: match.index ?? 0 }));
}

export function renderTemplate(template: string, values: Record<string, string | number | boolean>): string {
  return template.replace(placeholderPattern, (_whole, name: string) => String(values[name]));
}
