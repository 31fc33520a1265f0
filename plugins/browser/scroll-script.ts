/**
 * In-page scrolling (source text, see page-script.ts). The page itself scrolls when it can;
 * otherwise the largest scrollable panel does, as in apps whose content scrolls inside a frame
 * of fixed height. Scrolling is instant even where the page asks for smooth scrolling, so the
 * position read back is the final one.
 */

export interface ScrollScriptInput {
  direction: 'down' | 'up';
  /** How far; without it, one view's height. */
  pixels?: number;
}

export interface ScrollScriptOutput {
  moved: number;
  pixelsAbove: number;
  pixelsBelow: number;
  /** Whether an inner panel scrolled instead of the page. */
  panel: boolean;
}

export const scrollSource = String.raw`(input) => {
  const page = document.scrollingElement || document.documentElement;
  const scrollable = (element) => element.scrollHeight > element.clientHeight + 1 &&
    /(auto|scroll|overlay)/.test(getComputedStyle(element).overflowY);
  let target = page;
  if (page.scrollHeight <= window.innerHeight + 1) {
    let largest = 0;
    for (const element of document.querySelectorAll('*')) {
      if (!scrollable(element)) continue;
      const rect = element.getBoundingClientRect();
      const area = rect.width * rect.height;
      if (area > largest) {
        largest = area;
        target = element;
      }
    }
  }
  const view = target === page ? window.innerHeight : target.clientHeight;
  const pixels = Math.abs(input.pixels || view);
  const before = target.scrollTop;
  target.scrollBy({ top: input.direction === 'down' ? pixels : -pixels, behavior: 'instant' });
  const after = target.scrollTop;
  return {
    moved: Math.round(after - before),
    pixelsAbove: Math.round(after),
    pixelsBelow: Math.max(0, Math.round(target.scrollHeight - after - view)),
    panel: target !== page,
  };
}`;
