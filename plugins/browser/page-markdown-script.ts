/**
 * The in-page half of page-to-markdown (see page-script.ts for why it is source text). It works
 * on the live, rendered document: it can tell what is hidden or pinned over the page, which a
 * copy of the HTML cannot. It picks the main content the way reader modes do (a <main>, a lone
 * <article>, else the block that holds most of the paragraph text), leaves out navigation,
 * headers, footers, sidebars, forms' controls, cookie and newsletter boxes and fixed overlays,
 * and writes headings, paragraphs, lists, tables, links, quotes and code as markdown.
 */

export interface MarkdownScriptInput {
  maxCharacters: number;
}

export interface MarkdownScriptOutput {
  title: string;
  url: string;
  markdown: string;
  /** Which element was taken as the main content, like "main" or "div#content". */
  root: string;
  truncated: boolean;
}

export const pageMarkdownSource = String.raw`(input) => {
  const limit = input.maxCharacters;
  const alwaysSkipped = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'IFRAME', 'OBJECT', 'EMBED',
    'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'DIALOG', 'NAV', 'ASIDE', 'FOOTER', 'MENU', 'HEAD', 'LINK', 'META']);
  const skippedRoles = new Set(['navigation', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog', 'menu',
    'menubar', 'toolbar', 'banner']);
  const noise = /(^|[\s_-])(cookies?|consent|gdpr|newsletter|subscribe|subscription|promo|advert|advertisement|ads|sponsored|share|sharing|social|breadcrumbs?|skip-link|popup|modal|related|sidebar|comments?)($|[\s_-])/i;

  const textLength = (element) => (element && element.innerText ? element.innerText.trim().length : 0);
  const shown = (element) => !element.checkVisibility || element.checkVisibility({ visibilityProperty: true });

  const chooseRoot = () => {
    const body = document.body;
    if (!body) return document.documentElement;
    const bodyLength = Math.max(1, textLength(body));
    const substantial = (element) => textLength(element) >= Math.min(200, bodyLength * 0.3);
    const mains = Array.from(document.querySelectorAll('main, [role=main]')).filter(shown);
    const main = mains.sort((left, right) => textLength(right) - textLength(left))[0];
    if (main && substantial(main)) return main;
    const articles = Array.from(document.querySelectorAll('article')).filter(shown);
    if (articles.length === 1 && substantial(articles[0])) return articles[0];
    const scores = new Map();
    for (const paragraph of document.querySelectorAll('p, pre, td, blockquote')) {
      const length = textLength(paragraph);
      if (length < 25) continue;
      const score = 1 + (paragraph.innerText.match(/,/g) || []).length + Math.min(3, Math.floor(length / 100));
      const parent = paragraph.parentElement;
      if (parent) scores.set(parent, (scores.get(parent) || 0) + score);
      if (parent && parent.parentElement) scores.set(parent.parentElement, (scores.get(parent.parentElement) || 0) + score / 2);
    }
    let best = null;
    let bestScore = 0;
    for (const [element, score] of scores) {
      const linkText = Array.from(element.querySelectorAll('a')).reduce((sum, link) => sum + textLength(link), 0);
      const adjusted = score * (1 - Math.min(1, linkText / Math.max(1, textLength(element))));
      if (adjusted > bestScore) {
        best = element;
        bestScore = adjusted;
      }
    }
    return best && textLength(best) >= bodyLength * 0.2 ? best : body;
  };

  const root = chooseRoot();
  const rootIsPage = root === document.body || root === document.documentElement;

  const skip = (element) => {
    if (alwaysSkipped.has(element.tagName)) return true;
    if (element.tagName === 'HEADER' && rootIsPage) return true;
    const role = element.getAttribute('role');
    if (role && skippedRoles.has(role) && !(role === 'banner' && !rootIsPage)) return true;
    if (element.getAttribute('aria-hidden') === 'true' || element.hidden) return true;
    if (!shown(element)) return true;
    const style = getComputedStyle(element);
    if (style.position === 'fixed') return true;
    const label = (element.id || '') + ' ' + (typeof element.className === 'string' ? element.className : '');
    if (noise.test(label) && !element.querySelector('h1, main, article')) return true;
    return false;
  };

  let written = 0;
  let truncated = false;
  const oneLine = (text) => text.replace(/\s+/g, ' ').trim();
  const isBlock = (element) => {
    const display = getComputedStyle(element).display;
    return display !== 'inline' && display !== 'inline-block' && display !== 'contents' && display !== 'inline-flex';
  };

  const children = (element, state) => {
    let text = '';
    // A shadow root's slot shows the host's own children in its place.
    const nodes = element.tagName === 'SLOT' ? element.assignedNodes({ flatten: true }) : element.childNodes;
    for (const child of nodes) {
      if (written > limit) {
        truncated = true;
        break;
      }
      text += walk(child, state);
    }
    return text;
  };

  const listBlock = (element, state) => {
    const ordered = element.tagName === 'OL';
    let number = Number(element.getAttribute('start')) || 1;
    const items = [];
    for (const item of element.children) {
      if (item.tagName !== 'LI' || skip(item)) continue;
      const content = children(item, state).trim().replace(/\n{2,}/g, '\n');
      if (!content) continue;
      const marker = ordered ? number + '. ' : '- ';
      number += 1;
      items.push(marker + content.replace(/\n/g, '\n  '));
    }
    return items.length ? '\n\n' + items.join('\n') + '\n\n' : '';
  };

  const tableBlock = (element, state) => {
    const rows = Array.from(element.rows || []).filter((row) => !skip(row));
    if (rows.length === 0) return '';
    const cellText = (cell) => oneLine(children(cell, state)).replace(/\|/g, '\\|');
    const grid = rows.map((row) => Array.from(row.cells).map(cellText));
    const width = Math.max(...grid.map((row) => row.length));
    if (width < 2) return '\n\n' + grid.map((row) => row.join(' ')).join('\n') + '\n\n';
    const line = (cells) => '| ' + Array.from({ length: width }, (_, index) => cells[index] || '').join(' | ') + ' |';
    const [head, ...body] = grid;
    return '\n\n' + [line(head), line(Array(width).fill('---')), ...body.map(line)].join('\n') + '\n\n';
  };

  const walk = (node, state) => {
    if (node.nodeType === 3) {
      const text = state.pre ? node.data : node.data.replace(/\s+/g, ' ');
      written += text.length;
      return text;
    }
    if (node.nodeType !== 1) return '';
    const element = node;
    if (element !== root && skip(element)) return '';
    const tag = element.tagName;
    const inner = () => children(element.shadowRoot || element, state);
    switch (tag) {
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': {
        const text = oneLine(inner());
        return text ? '\n\n' + '#'.repeat(Number(tag[1])) + ' ' + text + '\n\n' : '';
      }
      case 'BR':
        return '\n';
      case 'HR':
        return '\n\n---\n\n';
      case 'A': {
        const text = oneLine(inner());
        const href = element.href;
        if (!text) return '';
        if (!href || href.startsWith('javascript:') || href.startsWith('data:')) return text;
        return '[' + text + '](' + href + ')';
      }
      case 'IMG': {
        const alt = oneLine(element.getAttribute('alt') || '');
        const source = element.currentSrc || element.src || '';
        return alt && source && !source.startsWith('data:') ? '![' + alt + '](' + source + ')' : alt;
      }
      case 'STRONG': case 'B': {
        const text = inner();
        return text.trim() ? '**' + text.trim() + '**' : text;
      }
      case 'EM': case 'I': {
        const text = inner();
        return text.trim() ? '_' + text.trim() + '_' : text;
      }
      case 'CODE':
        return state.pre ? inner() : '\u0060' + oneLine(inner()) + '\u0060';
      case 'PRE': {
        const text = children(element, { ...state, pre: true }).replace(/\n+$/, '');
        const fence = '\u0060\u0060\u0060';
        return '\n\n' + fence + '\n' + text + '\n' + fence + '\n\n';
      }
      case 'BLOCKQUOTE': {
        const text = inner().trim().replace(/\n{3,}/g, '\n\n');
        return text ? '\n\n' + text.split('\n').map((line) => '> ' + line).join('\n') + '\n\n' : '';
      }
      case 'UL': case 'OL':
        return listBlock(element, state);
      case 'TABLE':
        return tableBlock(element, state);
      case 'DT':
        return '\n\n**' + oneLine(inner()) + '**\n';
      case 'DD':
        return ': ' + oneLine(inner()) + '\n';
      default: {
        const text = inner();
        return isBlock(element) ? '\n\n' + text + '\n\n' : text;
      }
    }
  };

  const raw = walk(root, { pre: false });
  const markdown = raw
    .split('\n')
    .map((line) => line.replace(/\s+$/, '').replace(/^ (?=\S)/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const describe = (element) => element.tagName.toLowerCase() + (element.id ? '#' + element.id : '');
  return {
    title: document.title || oneLine((document.querySelector('h1') || {}).innerText || ''),
    url: location.href,
    markdown: markdown.length > limit ? markdown.slice(0, limit) : markdown,
    root: describe(root),
    truncated: truncated || markdown.length > limit,
  };
}`;
