/**
 * In-page scripts that draw each listed element's number over the page for a screenshot, so a
 * vision model can match what it sees to an index, and remove the drawing again afterwards.
 * Source text for the reason given in page-script.ts.
 */

export const highlightOverlayId = 'manus-element-highlights';

export interface HighlightInput {
  overlayId: string;
  attribute: string;
  indexes: number[];
}

export const drawHighlightsSource = String.raw`(input) => {
  const overlay = document.createElement('div');
  overlay.id = input.overlayId;
  overlay.style.cssText = 'position:fixed;inset:0;pointer-events:none;z-index:2147483647;';
  const colours = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#008080', '#9a6324', '#800000'];
  for (const index of input.indexes) {
    const element = document.querySelector('[' + input.attribute + '="' + index + '"]');
    if (!element) continue;
    const rect = element.getBoundingClientRect();
    if (rect.bottom < 0 || rect.top > innerHeight || rect.width === 0) continue;
    const colour = colours[index % colours.length];
    const box = document.createElement('div');
    box.style.cssText = 'position:fixed;box-sizing:border-box;border:2px solid ' + colour + ';left:' + rect.left + 'px;top:' + rect.top +
      'px;width:' + rect.width + 'px;height:' + rect.height + 'px;';
    const label = document.createElement('div');
    label.textContent = String(index);
    label.style.cssText = 'position:absolute;top:-2px;right:-2px;background:' + colour + ';color:#fff;font:bold 11px/1.2 sans-serif;padding:0 3px;';
    box.appendChild(label);
    overlay.appendChild(box);
  }
  document.documentElement.appendChild(overlay);
}`;

export const removeHighlightsSource = String.raw`(overlayId) => {
  const overlay = document.getElementById(overlayId);
  if (overlay) overlay.remove();
}`;
