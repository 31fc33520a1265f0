/**
 * Numbers the interactive elements of a page, across its frames, and finds an element again by
 * its number. The numbers live in the page as `data-manus-index` marks, so a number points at
 * exactly one element until that element's document goes away; then the lookup fails and the
 * model is told to read the current list instead of clicking something else by mistake.
 */
import type { Frame, Locator, Page } from 'playwright-core';
import { BrowserError } from './browser-errors.js';
import { indexAttribute, indexElementsSource, type IndexScriptInput, type IndexScriptOutput, type RawElement } from './element-index-script.js';
import { pageScriptCall } from './page-script.js';
import { withTimeout } from './time-limit.js';

export type ElementPosition = 'above' | 'in view' | 'below';

export interface IndexedElement extends RawElement {
  position: ElementPosition;
  /** Set for elements inside a frame: the frame's URL. */
  frameUrl?: string;
}

export interface ScrollPosition {
  pixelsAbove: number;
  pixelsBelow: number;
  viewportHeight: number;
  pageHeight: number;
}

export interface ElementSnapshot {
  elements: IndexedElement[];
  scroll: ScrollPosition;
}

/** What a tab remembers between indexings, so numbers continue instead of starting over. */
export interface ElementNumbering {
  documentId?: string;
  nextIndex: number;
  /** The elements of the last indexing by number, to describe an element an action used. */
  lastSeen: Map<number, IndexedElement>;
}

const maximumElementsPerFrame = 2000;
const maximumFrames = 20;

export function newElementNumbering(): ElementNumbering {
  return { nextIndex: 1, lastSeen: new Map() };
}

export async function indexElements(page: Page, numbering: ElementNumbering, timeoutMs: number): Promise<ElementSnapshot> {
  const main = await indexFrame(page.mainFrame(), { knownDocumentId: numbering.documentId ?? '', nextIndex: numbering.nextIndex }, timeoutMs);
  numbering.documentId = main.documentId;
  let nextIndex = main.nextIndex;
  const viewportHeight = main.scroll.viewportHeight;
  const elements = main.elements.map((element) => ({ ...element, position: positionOf(element, viewportHeight) }));
  for (const frame of page.frames().slice(1, maximumFrames + 1)) {
    const offset = await frameOffset(frame, timeoutMs);
    if (offset === undefined) continue;
    const inner = await indexFrame(frame, { knownDocumentId: null, nextIndex }, timeoutMs).catch(() => undefined);
    if (!inner) continue;
    nextIndex = inner.nextIndex;
    for (const element of inner.elements) {
      const shifted = { ...element, top: element.top + offset, bottom: element.bottom + offset, frameUrl: frame.url() };
      elements.push({ ...shifted, position: positionOf(shifted, viewportHeight) });
    }
  }
  numbering.nextIndex = nextIndex;
  numbering.lastSeen = new Map(elements.map((element) => [element.index, element]));
  const { top, pageHeight } = main.scroll;
  return {
    elements,
    scroll: { pixelsAbove: top, pixelsBelow: Math.max(0, pageHeight - top - viewportHeight), viewportHeight, pageHeight },
  };
}

/** The element marked with `index` in any frame of the page, or a stale-index error. */
export async function locateElement(page: Page, index: number): Promise<Locator> {
  const selector = `[${indexAttribute}="${index}"]`;
  for (const frame of page.frames()) {
    const locator = frame.locator(selector);
    const count = await locator.count().catch(() => 0);
    if (count > 0) return locator.first();
  }
  throw new BrowserError(
    'browser_element_not_found',
    `There is no element [${index}] on the current page: the page has changed since that list was made, or the number was never in it. ` +
      'Use an index from the current list of interactive elements (in the browser state), or scroll to bring the element into view first.',
  );
}

async function indexFrame(
  frame: Frame,
  start: Pick<IndexScriptInput, 'knownDocumentId' | 'nextIndex'>,
  timeoutMs: number,
): Promise<IndexScriptOutput> {
  const input: IndexScriptInput = { attribute: indexAttribute, maxElements: maximumElementsPerFrame, ...start };
  return withTimeout(frame.evaluate(pageScriptCall(indexElementsSource, input)) as Promise<IndexScriptOutput>, timeoutMs, 'listing the elements of the page');
}

/** The frame's top edge in the main viewport, or undefined for a frame that is not shown. */
async function frameOffset(frame: Frame, timeoutMs: number): Promise<number | undefined> {
  if (frame.isDetached()) return undefined;
  try {
    const element = await withTimeout(frame.frameElement(), timeoutMs, 'finding a frame');
    const box = await withTimeout(element.boundingBox(), timeoutMs, 'measuring a frame');
    return box && box.width > 0 && box.height > 0 ? box.y : undefined;
  } catch {
    return undefined;
  }
}

function positionOf(element: { top: number; bottom: number }, viewportHeight: number): ElementPosition {
  if (element.bottom <= 0) return 'above';
  if (element.top >= viewportHeight) return 'below';
  return 'in view';
}
