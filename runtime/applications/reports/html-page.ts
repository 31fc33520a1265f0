/**
 * The page every HTML report is written into: one file with its styles and scripts inline. Its
 * Content-Security-Policy lets only the page's own scripts run (by nonce) and loads nothing from
 * anywhere, so the page works offline and a string that escaped escaping could still not run or
 * call out. A page served live may also connect back to the server it came from.
 */
import { randomBytes } from 'node:crypto';
import { escapeHtml } from './html-text.js';
import { pageScript } from './html-page-script.js';
import { pageStyles } from './html-page-styles.js';

export interface HtmlPageOptions {
  title: string;
  body: string;
  /** More script, run after the page's own (a live view's updates). */
  script?: string;
  /** Let the page's scripts connect to the server it was served from. */
  connectToServer?: boolean;
}

export function htmlPage(options: HtmlPageOptions): string {
  const nonce = randomBytes(16).toString('base64');
  const policy = [
    "default-src 'none'",
    "img-src data:",
    "style-src 'unsafe-inline'",
    `script-src 'nonce-${nonce}'`,
    options.connectToServer ? "connect-src 'self'" : "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(policy)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    `<title>${escapeHtml(options.title)}</title>`,
    `<style>${pageStyles}</style>`,
    '</head>',
    '<body>',
    options.body,
    `<script nonce="${nonce}">${pageScript}${options.script ?? ''}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
