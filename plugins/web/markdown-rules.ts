/**
 * Turndown rules for what its defaults leave out: tables become pipe tables, <pre> without <code>
 * becomes a fenced block, strikethrough keeps its marks, list items take one space after their
 * marker (fewer characters for the same list), and images without alt text (decoration to a
 * reader of text) are dropped.
 */
import type TurndownService from 'turndown';

export function addMarkdownRules(service: TurndownService): void {
  service.addRule('table', {
    filter: 'table',
    replacement: (_content, node) => `\n\n${tableToMarkdown(node as Element, service)}\n\n`,
  });
  service.addRule('preformatted', {
    filter: (node) => node.nodeName === 'PRE' && node.firstElementChild?.nodeName !== 'CODE',
    replacement: (_content, node) => fencedBlock(node.textContent ?? '', ''),
  });
  service.addRule('fencedCode', {
    filter: (node) => node.nodeName === 'PRE' && node.firstElementChild?.nodeName === 'CODE',
    replacement: (_content, node) => {
      const code = (node as Element).firstElementChild as Element;
      const classes = `${code.getAttribute('class') ?? ''} ${(node as Element).getAttribute('class') ?? ''}`;
      const language = /(?:language|lang)-([\w+#-]+)/.exec(classes)?.[1] ?? '';
      return fencedBlock(code.textContent ?? '', language);
    },
  });
  service.addRule('strikethrough', {
    filter: ['del', 's'],
    replacement: (content) => (content.trim() ? `~~${content}~~` : ''),
  });
  service.addRule('compactListItem', {
    filter: 'li',
    replacement: (content, node) => {
      const prefix = listItemPrefix(node as Element);
      const body = content.replace(/^\n+/, '').replace(/\n+$/, '\n').replace(/\n/g, `\n${' '.repeat(prefix.length)}`);
      return prefix + body + (node.nextSibling && !body.endsWith('\n') ? '\n' : '');
    },
  });
  service.addRule('unlabelledImage', {
    filter: (node) => node.nodeName === 'IMG' && !(node as Element).getAttribute('alt')?.trim(),
    replacement: () => '',
  });
}

function listItemPrefix(item: Element): string {
  const list = item.parentElement;
  if (list?.nodeName !== 'OL') return '- ';
  const items = [...list.children].filter((child) => child.nodeName === 'LI');
  const start = Number(list.getAttribute('start') ?? '1');
  return `${(Number.isFinite(start) ? start : 1) + items.indexOf(item)}. `;
}

/** A fence longer than any backtick run in the code, so the code cannot close it early. */
function fencedBlock(code: string, language: string): string {
  const longestRun = Math.max(2, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  return `\n\n${fence}${language}\n${code.replace(/\n$/, '')}\n${fence}\n\n`;
}

function tableToMarkdown(table: Element, service: TurndownService): string {
  const rows = [...table.querySelectorAll('tr')].filter((row) => row.closest('table') === table);
  const cells = rows
    .map((row) => [...row.children].filter((cell) => cell.nodeName === 'TD' || cell.nodeName === 'TH'))
    .filter((row) => row.length > 0);
  if (cells.length === 0) return '';
  const width = Math.max(...cells.map((row) => row.length));
  const text = cells.map((row) => {
    const values = row.map((cell) => cellText(cell, service));
    while (values.length < width) values.push('');
    return `| ${values.join(' | ')} |`;
  });
  const caption = table.querySelector('caption')?.textContent?.replace(/\s+/g, ' ').trim();
  const separator = `| ${Array(width).fill('---').join(' | ')} |`;
  const lines = [text[0], separator, ...text.slice(1)];
  return caption ? `${caption}\n\n${lines.join('\n')}` : lines.join('\n');
}

/** A cell's markdown on one line: a pipe table has no room for block structure. */
function cellText(cell: Element, service: TurndownService): string {
  return service
    .turndown(cell as unknown as HTMLElement)
    .replace(/\s*\n+\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
}
