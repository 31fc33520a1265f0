/**
 * The names of a fan-out's branches, the last part of their step paths (`research/lisbon`): taken
 * from each item, so progress lines, reports and `runs show` say which item a branch worked on.
 * An item is data from the recipe, a parameter or an earlier step's answer, which the model wrote:
 * only letters and digits are kept, joined by '-', so no name holds a '/', markup or a control
 * character, and none is empty. Names stay distinct: a repeated one gets '-2', '-3', ...
 */

const longestName = 32;

export function branchNames(items: readonly unknown[]): string[] {
  const used = new Set<string>();
  return items.map((item, index) => {
    const base = safeName(label(item)) || String(index + 1);
    let name = base;
    for (let next = 2; used.has(name); next += 1) name = `${base}-${next}`;
    used.add(name);
    return name;
  });
}

/** What names an item: itself, or an object's name, title or id, or its first text. */
function label(item: unknown): string {
  if (typeof item === 'string') return item;
  if (typeof item === 'number' || typeof item === 'boolean') return String(item);
  if (item && typeof item === 'object' && !Array.isArray(item)) {
    const fields = item as Record<string, unknown>;
    const named = ['name', 'title', 'id'].map((key) => fields[key]).find((value) => typeof value === 'string' || typeof value === 'number');
    if (named !== undefined) return String(named);
    const text = Object.values(fields).find((value) => typeof value === 'string');
    if (typeof text === 'string') return text;
  }
  return JSON.stringify(item) ?? '';
}

function safeName(text: string): string {
  const words = text.normalize('NFC').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  let name = '';
  for (const word of words) {
    const longer = name ? `${name}-${word}` : word;
    if ([...longer].length > longestName) return name || [...word].slice(0, longestName).join('');
    name = longer;
  }
  return name;
}
