/** A tool's parameters as a person reads them in `manus tools`: one line each, wrapped at word boundaries. */

const width = 100;

interface ParameterSchema {
  type?: string | string[];
  enum?: unknown[];
  items?: ParameterSchema;
  description?: string;
}

/** `name (type, required): description`, one parameter a line, long lines wrapped under the first. */
export function parameterLines(parameters: Record<string, unknown>, indent: string): string[] {
  const properties = (parameters.properties ?? {}) as Record<string, ParameterSchema>;
  const required = new Set((parameters.required ?? []) as string[]);
  return Object.entries(properties).flatMap(([name, schema]) => {
    const kind = [typeOf(schema), ...(required.has(name) ? ['required'] : [])].join(', ');
    const description = schema.description ? `: ${schema.description.replace(/\s+/g, ' ').trim()}` : '';
    return wrapText(`${name} (${kind})${description}`, indent, `${indent}    `);
  });
}

function typeOf(schema: ParameterSchema): string {
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : schema.type ?? 'any';
  return type === 'array' && schema.items ? `array of ${typeOf(schema.items)}` : type;
}

/** Breaks text into lines of at most `width` characters at spaces; a word longer than a line stays whole. */
export function wrapText(text: string, firstIndent: string, nextIndent: string): string[] {
  const lines: string[] = [];
  let line = firstIndent;
  let empty = true;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = nextIndent;
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  if (!empty) lines.push(line);
  return lines;
}
