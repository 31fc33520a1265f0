/**
 * Splits long text into parts of at most `size` characters for the model, cutting between
 * paragraphs where possible, then between lines, then between words, and only then inside a
 * word (never inside a surrogate pair).
 */
export function splitIntoChunks(text: string, size: number): string[] {
  if (size <= 0) throw new RangeError('chunk size must be positive');
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > size) {
    const cut = cutPoint(rest, size);
    chunks.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).replace(/^\n+/, '');
  }
  if (rest.length > 0 || chunks.length === 0) chunks.push(rest);
  return chunks;
}

function cutPoint(text: string, size: number): number {
  // A boundary early in the text would make a part much smaller than it may be.
  const minimum = Math.floor(size / 2);
  for (const separator of ['\n\n', '\n', ' ']) {
    const index = text.lastIndexOf(separator, size);
    // A cut after a space keeps the space with the part, where trimming removes it.
    if (index >= minimum) return separator === ' ' ? index + 1 : index;
  }
  const code = text.charCodeAt(size);
  return code >= 0xdc00 && code <= 0xdfff ? size - 1 : size;
}
