/**
 * The in-page half of element indexing (see page-script.ts for why it is source text). It finds
 * the visible interactive elements of one document, open shadow roots included, and marks each
 * with `data-manus-index`. An element that already has a mark keeps its number, so an index the
 * model has seen stays valid while the document lives; a new document starts without marks.
 */

export const indexAttribute = 'data-manus-index';

export interface IndexScriptInput {
  attribute: string;
  /**
   * The document the numbers so far belong to (main frame only). Another document means the
   * page changed: numbering starts again at 1. Null for child frames, which share the page's count.
   */
  knownDocumentId: string | null;
  /** The lowest number a new element may get; numbers are unique across a page's frames. */
  nextIndex: number;
  maxElements: number;
}

export interface RawElement {
  index: number;
  tag: string;
  text: string;
  attributes: Record<string, string>;
  /** Position relative to the frame's viewport, in CSS pixels. */
  top: number;
  bottom: number;
}

export interface IndexScriptOutput {
  documentId: string;
  elements: RawElement[];
  nextIndex: number;
  scroll: { top: number; viewportHeight: number; viewportWidth: number; pageHeight: number };
}

export const indexElementsSource = String.raw`(input) => {
  const attribute = input.attribute;
  const selector = [
    'a[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea', 'summary',
    '[role=button]', '[role=link]', '[role=checkbox]', '[role=radio]', '[role=tab]', '[role=menuitem]',
    '[role=menuitemcheckbox]', '[role=menuitemradio]', '[role=option]', '[role=switch]', '[role=combobox]',
    '[role=textbox]', '[role=searchbox]', '[role=slider]', '[role=spinbutton]', '[role=treeitem]',
    '[onclick]', '[tabindex]:not([tabindex="-1"])', '[contenteditable]:not([contenteditable=false])',
  ].join(',');

  if (!document.__manusDocumentId) {
    Object.defineProperty(document, '__manusDocumentId', { value: Math.random().toString(36).slice(2), enumerable: false });
  }

  const candidates = [];
  const collect = (root) => {
    for (const element of root.querySelectorAll(selector)) candidates.push(element);
    for (const host of root.querySelectorAll('*')) if (host.shadowRoot) collect(host.shadowRoot);
  };
  collect(document);

  const scrollTop = window.scrollY;
  const isShown = (element) => {
    if (element.checkVisibility && !element.checkVisibility({ visibilityProperty: true })) return false;
    let rect = element.getBoundingClientRect();
    if (rect.width <= 0 || rect.height <= 0) {
      const child = element.firstElementChild;
      if (!child) return false;
      rect = child.getBoundingClientRect();
      if (rect.width <= 0 || rect.height <= 0) return false;
    }
    // Moved off the page on purpose, like "skip to content" links.
    return rect.right > 0 && rect.bottom + scrollTop > 0;
  };

  const clean = (text, limit) => {
    const collapsed = String(text || '').replace(/\s+/g, ' ').trim();
    return collapsed.length > limit ? collapsed.slice(0, limit - 1) + '\u2026' : collapsed;
  };

  const describe = (element) => {
    const tag = element.tagName.toLowerCase();
    const attributes = {};
    const put = (name, value) => {
      if (value !== null && value !== undefined && value !== '') attributes[name] = clean(value, 150);
    };
    const type = tag === 'input' ? (element.type || 'text') : element.getAttribute('type');
    if (tag === 'a') {
      put('href', element.getAttribute('href'));
      if (element.target === '_blank') put('target', '_blank');
    }
    put('role', element.getAttribute('role'));
    if (tag === 'input' || tag === 'button') put('type', type);
    put('name', element.getAttribute('name'));
    put('placeholder', element.getAttribute('placeholder'));
    put('aria-label', element.getAttribute('aria-label'));
    let text = '';
    if (tag === 'input') {
      if (type === 'checkbox' || type === 'radio') put('checked', element.checked ? 'true' : 'false');
      else if (type === 'password') put('value', element.value ? '********' : '');
      else if (type === 'submit' || type === 'button' || type === 'reset') text = element.value;
      else if (type !== 'file') put('value', element.value);
    } else if (tag === 'textarea') {
      put('value', element.value);
    } else if (tag === 'select') {
      const selected = element.selectedOptions && element.selectedOptions[0];
      put('value', selected ? selected.text : '');
    } else {
      text = element.innerText || element.textContent || '';
      if (!clean(text, 10)) {
        const image = element.querySelector('img[alt]');
        text = (image && image.getAttribute('alt')) || element.getAttribute('title') || '';
      }
    }
    if (element.isContentEditable && tag !== 'input' && tag !== 'textarea') put('contenteditable', 'true');
    if (element.disabled || element.getAttribute('aria-disabled') === 'true') put('disabled', 'true');
    put('aria-expanded', element.getAttribute('aria-expanded'));
    return { tag, text: clean(text, 100), attributes };
  };

  const shown = candidates.filter(isShown).slice(0, input.maxElements);
  const sameDocument = input.knownDocumentId === null || input.knownDocumentId === document.__manusDocumentId;
  let next = sameDocument ? input.nextIndex : 1;
  for (const element of shown) {
    const mark = Number(element.getAttribute(attribute));
    if (Number.isInteger(mark) && mark >= next) next = mark + 1;
  }
  const used = new Set();
  const elements = [];
  for (const element of shown) {
    let index = Number(element.getAttribute(attribute));
    // A copied element (cloneNode keeps attributes) must not share its original's number.
    if (!Number.isInteger(index) || index < 1 || used.has(index)) {
      index = next;
      next += 1;
      element.setAttribute(attribute, String(index));
    }
    used.add(index);
    const rect = element.getBoundingClientRect();
    elements.push({ index, ...describe(element), top: Math.round(rect.top), bottom: Math.round(rect.bottom) });
  }

  const scroller = document.scrollingElement || document.documentElement;
  return {
    documentId: document.__manusDocumentId,
    elements,
    nextIndex: next,
    scroll: {
      top: Math.round(window.scrollY),
      viewportHeight: window.innerHeight,
      viewportWidth: window.innerWidth,
      pageHeight: Math.round(scroller ? scroller.scrollHeight : window.innerHeight),
    },
  };
}`;
