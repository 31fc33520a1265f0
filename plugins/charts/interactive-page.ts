/**
 * A self-contained HTML page for a chart: Vega and Vega-Lite are inlined from the installed
 * packages, so the page works offline, keeps the chart's interactions (tooltips, selections,
 * zoom) and needs no server.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

let libraries: Promise<string[]> | undefined;

/**
 * The page loads nothing from anywhere: a specification is the model's, and a background, image or
 * link URL in it would otherwise send whatever the model put in it when the user opens the page.
 * Vega compiles its expressions with `Function`, hence 'unsafe-eval'; its scripts and styles are inline.
 */
const contentSecurityPolicy = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:";

export async function interactivePage(specification: Record<string, unknown>, title: string): Promise<string> {
  libraries ??= readLibraries();
  const [vegaSource, vegaLiteSource] = await libraries;
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    '<style>body { margin: 16px; font-family: sans-serif; } #chart-error { color: #b00020; }</style>',
    `<script>${inlineScript(vegaSource)}</script>`,
    `<script>${inlineScript(vegaLiteSource)}</script>`,
    '</head>',
    '<body>',
    '<div id="chart"></div>',
    '<pre id="chart-error"></pre>',
    `<script type="application/json" id="chart-specification">${inlineJson(specification)}</script>`,
    '<script>',
    'const specification = JSON.parse(document.getElementById("chart-specification").textContent);',
    'new vega.View(vega.parse(vegaLite.compile(specification).spec), { renderer: "svg", container: "#chart", hover: true })',
    '  .runAsync()',
    '  .catch((error) => { document.getElementById("chart-error").textContent = String(error); });',
    '</script>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** The browser builds the packages ship beside their Node entries. */
async function readLibraries(): Promise<string[]> {
  const require = createRequire(import.meta.url);
  const files = [
    join(dirname(require.resolve('vega')), 'vega.min.js'),
    join(dirname(require.resolve('vega-lite')), 'vega-lite.min.js'),
  ];
  return Promise.all(files.map((file) => readFile(file, 'utf8')));
}

/** A script element ends at the first "</script" in its text, wherever it stands. */
function inlineScript(source: string): string {
  return source.replace(/<\/(script)/gi, '<\\/$1');
}

/** JSON inside a script element: "<" escaped keeps any "</script" in the data from ending it. */
function inlineJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[character] as string);
}
