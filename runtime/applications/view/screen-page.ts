/**
 * A run's live screen on `manus view --serve`: a tool that drives a screen (the computer tool's
 * virtual desktop) keeps its latest screenshot as `live-screen.png` in the run's folder, and this
 * page shows it, fetched again every second, so the desktop can be watched without a VNC server.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { escapeHtml } from '../reports/html-text.js';

export const liveScreenFileName = 'live-screen.png';

const refreshMilliseconds = 1000;

/**
 * The run's latest screenshot, or undefined when it has none. A link in its place is refused: the
 * file is opened without following one, so a run's folder cannot serve a file from elsewhere.
 */
export async function readLiveScreen(runDirectory: string): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(join(runDirectory, liveScreenFileName), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Its one script runs by a nonce; it loads the picture from this server and connects nowhere else. */
export function screenPageHtml(runId: string, runHref: string): string {
  const nonce = randomBytes(16).toString('base64');
  const policy = `default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'none'`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${policy}"><title>Screen of run ${escapeHtml(runId)}</title>
<style>body{margin:0;background:#222;color:#ddd;font:14px sans-serif}p{margin:6px 10px}a{color:#9cf}img{display:block;max-width:100%;margin:0 auto}</style>
</head><body><p><a href="${escapeHtml(runHref)}">Run ${escapeHtml(runId)}</a> · <span id="state">The screen, every second.</span></p>
<img id="screen" alt="The run's screen" src="screen.png">
<script nonce="${nonce}">
const image = document.getElementById('screen');
const state = document.getElementById('state');
setInterval(() => {
  const next = new Image();
  next.onload = () => { image.src = next.src; state.textContent = 'The screen at ' + new Date().toLocaleTimeString(); };
  next.onerror = () => { state.textContent = 'No screenshot: the run has none yet, or its folder is gone.'; };
  next.src = 'screen.png?t=' + Date.now();
}, ${refreshMilliseconds});
</script></body></html>
`;
}
