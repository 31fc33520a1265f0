/**
 * The numbered element list as the model reads it, HTML-like because models read HTML well:
 * `[4]<input type="email" name="email" placeholder="you@example.org"/>`. A character budget
 * keeps it small; elements in view come first, then those nearest below and above, and the
 * list says how many it left out and how to reach them.
 */
import type { ElementSnapshot, IndexedElement } from './element-index.js';

const voidTags = new Set(['input', 'img', 'br', 'hr']);
/** The longest the closing note about left-out elements gets. */
const omissionNoteRoom = 220;

export function formatElement(element: IndexedElement): string {
  const attributes = Object.entries(element.attributes)
    .map(([name, value]) => ` ${name}="${value.replace(/"/g, "'")}"`)
    .join('');
  const frame = element.frameUrl ? ' (in a frame)' : '';
  if (voidTags.has(element.tag) && element.text === '') return `[${element.index}]<${element.tag}${attributes}/>${frame}`;
  return `[${element.index}]<${element.tag}${attributes}>${element.text}</${element.tag}>${frame}`;
}

export interface FormattedElementList {
  text: string;
  listed: number;
  omitted: number;
}

/** The list within `budget` characters, in page order, with a closing line about what is left out. */
export function formatElementList(snapshot: ElementSnapshot, budget: number): FormattedElementList {
  const { elements } = snapshot;
  if (elements.length === 0) return { text: 'No interactive elements are visible on this page.', listed: 0, omitted: 0 };
  const lines = new Map(elements.map((element) => [element, formatElement(element)]));
  const total = [...lines.values()].reduce((sum, line) => sum + line.length + 1, 0);
  // When not everything fits, the closing note needs room too.
  const room = total <= budget ? budget : budget - omissionNoteRoom;
  const chosen = new Set<IndexedElement>();
  let used = 0;
  for (const element of byPriority(elements, snapshot.scroll.viewportHeight)) {
    const cost = lines.get(element)!.length + 1;
    // The budget is filled in priority order; a long line may be skipped for shorter ones after it.
    if (used + cost > room) continue;
    chosen.add(element);
    used += cost;
  }
  const listed = elements.filter((element) => chosen.has(element));
  const left = elements.filter((element) => !chosen.has(element));
  const text = listed.map((element) => lines.get(element)).join('\n');
  return { text: left.length > 0 ? `${text}\n${omissionNote(left)}` : text, listed: listed.length, omitted: left.length };
}

function byPriority(elements: IndexedElement[], viewportHeight: number): IndexedElement[] {
  const distance = (element: IndexedElement) => {
    if (element.position === 'in view') return 0;
    return element.position === 'below' ? element.top - viewportHeight : -element.bottom;
  };
  // Below the view is where reading goes next, so it counts as nearer than the same distance above.
  const weight = (element: IndexedElement) => (element.position === 'above' ? distance(element) * 2 : distance(element));
  return [...elements].sort((left, right) => weight(left) - weight(right));
}

function omissionNote(left: IndexedElement[]): string {
  const count = (position: IndexedElement['position']) => left.filter((element) => element.position === position).length;
  const parts: string[] = [];
  const above = count('above');
  const inView = count('in view');
  const below = count('below');
  if (inView > 0) parts.push(`${inView} in view (scroll_down a little to list them)`);
  if (below > 0) parts.push(`${below} below the view (scroll_down to list them)`);
  if (above > 0) parts.push(`${above} above the view (scroll_up to list them)`);
  return `... ${left.length} more elements not listed to keep this short: ${parts.join(', ')}.`;
}
