import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import computer from '../plugins/computer/computer.js';
import { desktopPrograms } from '../plugins/computer/desktop-script.js';
import { liveScreenFileName } from '../plugins/computer/live-screen.js';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import type { SandboxKind } from '../runtime/contract/sandbox-types.js';
import type { ToolContext, ToolResult } from '../runtime/contract/tool.js';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { probeDocker } from '../runtime/services/sandbox/docker-connection.js';
import { startViewServer } from '../runtime/applications/view/view-server.js';
import { SecretRedactor } from '../runtime/services/secret-redaction.js';
import { terminate, toolMessages } from './support/loop-fixture.js';
import { processesWithArgument } from './support/processes.js';
import { makeFixture, readEvents, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedTurn } from './support/scripted-model-server.js';
import { useToolContexts } from './support/tool-context.js';

/** The desktop's programs, and xterm, which the tests drive; under bubblewrap they are this machine's. */
const hostMissing = [...desktopPrograms.map(({ program, debian }) => ({ program, debian })), { program: 'xterm', debian: 'xterm' }].filter(
  ({ program }) => spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0,
);
const desktopSkip = hostMissing.length > 0
  ? `computer use tests skipped: ${hostMissing.map(({ program }) => program).join(', ')} missing (apt-get install -y ${[...new Set(hostMissing.map(({ debian }) => debian))].join(' ')})`
  : '';
const bwrap = await probeBwrap();
const bwrapSkip = desktopSkip || (bwrap.usable ? '' : `computer use tests under bubblewrap skipped: ${bwrap.reason}`);
const docker = await probeDocker(sandboxDefaults.image);
const dockerSkip = docker.available ? '' : `computer use tests in Docker skipped: ${docker.reason}`;
for (const reason of [bwrapSkip, dockerSkip]) if (reason) console.warn(reason);

const createContext = useToolContexts();

function contextIn(kind: SandboxKind, settings: Record<string, unknown> = {}) {
  return createContext({ sandboxSettings: async () => ({ kind, network: false, options: {} }), settings });
}

async function act(context: ToolContext, input: Record<string, unknown>): Promise<ToolResult> {
  const result = await computer.execute(input as never, context);
  return typeof result === 'string' ? { content: result } : result;
}

interface Screen {
  width: number;
  height: number;
  pixel(x: number, y: number): [number, number, number];
}

async function screenshot(context: ToolContext): Promise<Screen> {
  const result = await act(context, { action: 'screenshot' });
  expect(result.images).toHaveLength(1);
  expect(result.images![0].mimeType).toBe('image/png');
  const png = PNG.sync.read(Buffer.from(result.images![0].data, 'base64'));
  return {
    width: png.width,
    height: png.height,
    pixel: (x, y) => {
      const at = (y * png.width + x) * 4;
      return [png.data[at], png.data[at + 1], png.data[at + 2]];
    },
  };
}

function countPixels(screen: Screen, test: (red: number, green: number, blue: number) => boolean): number {
  let count = 0;
  for (let y = 0; y < screen.height; y++) for (let x = 0; x < screen.width; x++) if (test(...screen.pixel(x, y))) count++;
  return count;
}

const isDark = (red: number, green: number, blue: number) => red < 90 && green < 90 && blue < 90;
/** xterm's green background colour (ANSI 42) is 0,205,0. */
const isGreen = (red: number, green: number, blue: number) => green > 150 && red < 60 && blue < 60;

/** Dark pixels in the rows from `top` to `bottom`. */
function darkInRows(screen: Screen, top: number, bottom: number): number {
  let dark = 0;
  for (let y = top; y <= bottom; y++) for (let x = 0; x < screen.width; x++) if (isDark(...screen.pixel(x, y))) dark++;
  return dark;
}

/** The lowest run of rows that hold dark pixels: the prompt line with xterm's block cursor, which fills its cell. */
function cursorLine(screen: Screen): { top: number; bottom: number } {
  let y = screen.height - 1;
  while (y >= 0 && darkInRows(screen, y, y) === 0) y--;
  const bottom = y;
  while (y >= 0 && darkInRows(screen, y, y) > 0) y--;
  return { top: y + 1, bottom };
}

/**
 * The shell's prompt is on the screen: the first line's dark pixels span more than the cursor,
 * which xterm draws before the shell has started and which alone is one cell wide.
 */
function promptShown(screen: Screen): boolean {
  const { top, bottom } = cursorLine(screen);
  let left = screen.width;
  let right = -1;
  for (let y = top; y <= bottom; y++) {
    for (let x = 0; x < screen.width; x++) {
      if (!isDark(...screen.pixel(x, y))) continue;
      left = Math.min(left, x);
      right = Math.max(right, x);
    }
  }
  return right - left > 10;
}

/** Screenshots until `ready` holds; a program on the desktop takes a moment to draw. */
async function screenUntil(context: ToolContext, ready: (screen: Screen) => boolean, what: string): Promise<Screen> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const screen = await screenshot(context);
    if (ready(screen)) return screen;
    if (Date.now() > deadline) throw new Error(`the screen never showed ${what}`);
    await delay(200);
  }
}

async function waitForFile(path: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await delay(100);
  }
}

/**
 * Types a command into the desktop's terminal and reads its output back from the screen; then
 * selects a line with a triple click (drawn in reverse video), pastes it with the middle button
 * and runs it, which makes a file in the workspace.
 */
async function typeClickAndRead(kind: SandboxKind): Promise<void> {
  const { context } = contextIn(kind, { screen_interval: 0 });
  const first = await screenUntil(context, promptShown, 'the terminal prompt');
  expect([first.width, first.height]).toEqual([1024, 768]);
  expect(countPixels(first, isGreen)).toBe(0);

  // A click gives the terminal the keyboard, whether or not the window manager has yet.
  await act(context, { action: 'click', x: first.width / 2, y: first.height / 2 });
  const typed = await act(context, { action: 'typing', text: "printf '\\033[42m%60s\\033[0m\\n' ''\n" });
  expect(typed.content).toMatch(/^Typed \d+ characters\.$/);
  const withBar = await screenUntil(context, (screen) => countPixels(screen, isGreen) > 60 * 5 * 8, 'a green bar');
  // Sixty cells of a green background, one line high: about 60 × 6 × 13 pixels in xterm's fixed font.
  expect(countPixels(withBar, isGreen)).toBeLessThan(60 * 20 * 30);

  const barCursor = cursorLine(withBar);
  const cellHeight = barCursor.bottom - barCursor.top + 1;
  await act(context, { action: 'typing', text: 'echo touch clicked-file.txt' });
  await act(context, { action: 'press', key: 'enter' });
  // The echoed line, then a new prompt: the cursor comes down two lines.
  const printed = await screenUntil(context, (screen) => cursorLine(screen).top >= barCursor.top + 2 * cellHeight, 'the echoed line');
  const outputTop = cursorLine(printed).top - cellHeight;
  const middle = outputTop + Math.floor(cellHeight / 2);
  const before = darkInRows(printed, outputTop, outputTop + cellHeight - 1);
  const clicked = await act(context, { action: 'click', x: 20, y: middle, num_clicks: 3 });
  expect(clicked.content).toBe(`Clicked the left button 3 times at (20, ${middle}).`);
  // The selected line is drawn in reverse video: its cells turn dark.
  const selected = await screenUntil(context, (screen) => darkInRows(screen, outputTop, outputTop + cellHeight - 1) > before * 3, 'the selected line in reverse video');
  expect(selected.width).toBe(1024);
  await act(context, { action: 'click', button: 'middle' });
  await act(context, { action: 'press', key: 'Return' });
  await waitForFile(join(context.workspace, 'clicked-file.txt'));

  expect(existsSync(join(context.runDirectory, liveScreenFileName))).toBe(true);
  const live = PNG.sync.read(readFileSync(join(context.runDirectory, liveScreenFileName)));
  expect([live.width, live.height]).toEqual([1024, 768]);
}

describe.skipIf(bwrapSkip !== '')('the computer tool on a desktop under bubblewrap', () => {
  it('types a command, clicks, and reads the screen back', { timeout: 60_000 }, async () => {
    await typeClickAndRead('bwrap');
  });

  it('moves the pointer, scrolls, drags and presses combinations, refusing points off the screen', { timeout: 30_000 }, async () => {
    const { context } = contextIn('bwrap', { screen_size: '800x600', programs: [] });
    const screen = await screenshot(context);
    expect([screen.width, screen.height]).toEqual([800, 600]);
    expect((await act(context, { action: 'move_to', x: 100, y: 200 })).content).toBe('Moved the pointer to (100, 200).');
    expect((await act(context, { action: 'scroll', direction: 'down', amount: 2 })).content).toBe('Scrolled down by 2.');
    expect((await act(context, { action: 'drag_to', x: 300, y: 300 })).content).toBe('Dragged from where the pointer was to (300, 300).');
    expect((await act(context, { action: 'hotkey', keys: 'ctrl+shift+t' })).content).toBe('Pressed ctrl+shift+t.');
    await expect(act(context, { action: 'click', x: 800, y: 10 })).rejects.toThrow(/off the screen, which is 800x600/);
    await expect(act(context, { action: 'typing' })).rejects.toThrow(/typing action needs `text`/);
    await expect(act(context, { action: 'press', key: 'ctrl+$(reboot)' })).rejects.toThrow(/key name or a combination/);
  });

  it('refuses a call with bad arguments or settings before starting a desktop for it', async () => {
    const test = contextIn('bwrap', { screen_size: '800x600' });
    await expect(act(test.context, { action: 'drag_to', x: 10 })).rejects.toThrow(/Give both `x` and `y`/);
    await expect(act(createContext({ settings: { screen_size: 'huge' } }).context, { action: 'screenshot' })).rejects.toThrow(/screen_size must be WIDTHxHEIGHT/);
    await expect(act(createContext({ settings: { watch: 'yes' } }).context, { action: 'screenshot' })).rejects.toThrow(/watch must be true or false/);
    expect(test.events.filter((event) => event.type === 'desktop-start')).toEqual([]);
  });

  it('serves the live screen on loopback with tool_settings.computer.watch, behind a token and a Host check', { timeout: 30_000 }, async () => {
    const messages: string[] = [];
    const { context } = createContext({
      sandboxSettings: async () => ({ kind: 'bwrap', network: false, options: {} }),
      settings: { watch: true, programs: [], screen_size: '640x480' },
      logger: { info: (message) => messages.push(message), warn() {}, debug() {} },
    });
    await act(context, { action: 'move_to', x: 10, y: 10 });
    const url = /Watch the desktop's screen at (http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/)/.exec(messages.join('\n'))?.[1];
    expect(url, messages.join('\n')).toBeDefined();
    expect(await (await fetch(url!)).text()).toContain('src="screen.png"');
    const deadline = Date.now() + 10_000;
    let screen = await fetch(`${url}screen.png`);
    while (screen.status !== 200 && Date.now() < deadline) {
      await delay(200);
      screen = await fetch(`${url}screen.png`);
    }
    const png = PNG.sync.read(Buffer.from(await screen.arrayBuffer()));
    expect([png.width, png.height]).toEqual([640, 480]);
    const origin = new URL(url!).origin;
    expect((await fetch(`${origin}/screen.png`)).status).toBe(404);
    const rebound = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${url}screen.png`, { headers: { host: 'attacker.example' } }, (response) => resolve(response.statusCode ?? 0));
      request.on('error', reject);
      request.end();
    });
    expect(rebound).toBe(403);
  });

  it('stops the X server and everything on the desktop when the run ends', { timeout: 30_000 }, async () => {
    const test = contextIn('bwrap', { screen_size: '640x480', programs: [] });
    await screenshot(test.context);
    const servers = processesWithArgument('640x480x24');
    expect(servers.length).toBeGreaterThan(0);
    await test.dispose();
    expect(processesWithArgument('640x480x24')).toEqual([]);
  });
});

describe.skipIf(desktopSkip !== '')('the computer tool on a desktop in the host sandbox', () => {
  it('needs the cookie to reach the X server, and stops it with the terminal when the run ends', { timeout: 30_000 }, async () => {
    const test = contextIn('host', { screen_size: '656x480' });
    await screenshot(test.context);
    expect(processesWithArgument('656x480x24')).toHaveLength(1);
    // Another local user knows the display but not the cookie.
    const started = test.events.find((event) => event.type === 'desktop-start');
    const display = String(started?.data.display);
    const stranger = spawnSync('xdotool', ['getmouselocation'], { env: { PATH: process.env.PATH, DISPLAY: display, XAUTHORITY: '/nonexistent' }, encoding: 'utf8' });
    expect(stranger.status).not.toBe(0);
    expect(stranger.stderr).toContain('Authorization required');
    await test.dispose();
    expect(processesWithArgument('656x480x24')).toEqual([]);
  });
});

describe.skipIf(bwrapSkip !== '' || dockerSkip !== '')('the computer tool on a desktop in the Docker sandbox', () => {
  it('types a command, clicks, and reads the screen back', { timeout: 120_000 }, async () => {
    await typeClickAndRead('docker');
  });
});

const agentsYaml = (vision: boolean, toolSettings = '{}') => `version: 1
llm:
  default: { provider: openai-compatible, vision: ${vision} }
agents:
  desktop:
    description: Works on a virtual desktop.
    system_prompt: You work on a virtual desktop with the computer tool.
    tools: [computer, terminate]
    tool_settings: { computer: ${toolSettings} }
    max_steps: 10
`;
const recipe = 'version: 1\nname: desktop\nprompt: Leave a note from the desktop.\nagent: desktop\n';
const call = (name: string, args: Record<string, unknown>): ScriptedTurn => ({ toolCalls: [{ name, arguments: args }] });

async function runDesktopRecipe(vision: boolean, turns: ScriptedTurn[], toolSettings?: string) {
  const fixture = makeFixture({ 'agents.yaml': agentsYaml(vision, toolSettings), 'recipe.yaml': recipe });
  const server = await startScriptedModelServer({ turns });
  try {
    const result = await runCli(['run', 'recipe.yaml', '--json'], {
      cwd: fixture,
      env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' },
      timeoutMs: 90_000,
    });
    const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
    return { ...result, requests, fixture };
  } finally {
    await server.close();
  }
}

/** The image parts of a request's messages. */
function imageUrls(request: RecordedChatRequest): string[] {
  return request.body.messages.flatMap((message) =>
    Array.isArray(message.content) ? message.content.filter((part) => part.type === 'image_url').map((part) => (part as { image_url: { url: string } }).image_url.url) : [],
  );
}

describe.skipIf(bwrapSkip !== '')('the computer tool through the built command', () => {
  it('types into the desktop, shows the screenshot to a vision profile, and serves the live screen on manus view --serve', { timeout: 120_000 }, async () => {
    const run = await runDesktopRecipe(true, [
      call('computer', { action: 'screenshot' }),
      call('computer', { action: 'typing', text: 'echo typed on the desktop > desktop-note.txt\n' }),
      call('computer', { action: 'screenshot' }),
      terminate('left a note'),
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readFileSync(join(run.json.workspace, 'desktop-note.txt'), 'utf8')).toBe('typed on the desktop\n');
    const [shown] = imageUrls(run.requests[1]);
    expect(shown).toMatch(/^data:image\/png;base64,/);
    const png = PNG.sync.read(Buffer.from(shown.slice(shown.indexOf(',') + 1), 'base64'));
    expect([png.width, png.height]).toEqual([1024, 768]);
    expect(toolMessages(run.requests[2]).at(-1)!.content).toBe('Typed 45 characters.');
    const events = readEvents(run.json.runDirectory);
    const started = events.find((event) => event.type === 'desktop-start');
    expect(started, JSON.stringify(started)).toMatchObject({ width: 1024, height: 768, sandbox: 'bwrap' });

    const runsDirectory = join(run.fixture, '.manus', 'runs');
    const view = await startViewServer({ runsDirectory, batchesDirectory: join(run.fixture, '.manus', 'batches'), port: 0, redactor: new SecretRedactor([]) });
    try {
      const runId = run.json.runDirectory.split('/').at(-1);
      const runPage = await (await fetch(`${view.url}runs/${runId}`)).text();
      expect(runPage).toContain(`href="/runs/${runId}/screen"`);
      const page = await fetch(`${view.url}runs/${runId}/screen`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('src="screen.png"');
      const screen = await fetch(`${view.url}runs/${runId}/screen.png`);
      expect(screen.headers.get('content-type')).toBe('image/png');
      const live = PNG.sync.read(Buffer.from(await screen.arrayBuffer()));
      expect([live.width, live.height]).toEqual([1024, 768]);
      // A link in the screenshot's place is not followed.
      rmSync(join(run.json.runDirectory, liveScreenFileName));
      symlinkSync(join(run.json.workspace, 'desktop-note.txt'), join(run.json.runDirectory, liveScreenFileName));
      expect((await fetch(`${view.url}runs/${runId}/screen.png`)).status).toBe(404);
    } finally {
      await view.close();
    }
  });

  it('tells a profile that is not vision-capable that the screenshot was not shown, and prints the watch page address', { timeout: 120_000 }, async () => {
    const run = await runDesktopRecipe(false, [call('computer', { action: 'screenshot' }), terminate('looked')], '{ watch: true }');
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/computer: Watch the desktop's screen at http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\//);
    expect(imageUrls(run.requests[1])).toEqual([]);
    expect(JSON.stringify(run.requests[1].body.messages)).toContain('not shown: this model profile is not marked vision-capable');
  });

  it('manus doctor names the Debian packages when the desktop programs are missing', { timeout: 60_000 }, async () => {
    const fixture = makeFixture({ 'agents.yaml': agentsYaml(false) });
    // A PATH with a shell and bubblewrap only, and no Docker daemon: wherever the check runs, it finds no X programs.
    const bin = join(fixture, 'bin');
    mkdirSync(bin);
    for (const program of ['sh', 'bwrap']) symlinkSync(spawnSync('sh', ['-c', `command -v ${program}`]).stdout.toString().trim(), join(bin, program));
    const environment = { PATH: bin, DOCKER_HOST: `unix://${join(fixture, 'no-docker.sock')}` };
    const run = await runCli(['doctor', '--agent', 'desktop', '--json'], { cwd: fixture, env: environment, timeoutMs: 60_000 });
    const finding = (run.json.findings as Array<{ check: string; status: string; detail: string; fix?: string }>).find((entry) => entry.check === 'desktop');
    expect(finding, run.stdout + run.stderr).toMatchObject({ status: 'missing' });
    expect(finding!.detail).toContain('Xvfb (the virtual X server)');
    expect(finding!.fix).toContain('apt-get install xvfb xauth matchbox-window-manager xdotool imagemagick');

    const present = await runCli(['doctor', '--agent', 'desktop', '--json'], { cwd: fixture, timeoutMs: 60_000 });
    expect((present.json.findings as Array<{ check: string; status: string }>).find((entry) => entry.check === 'desktop')).toMatchObject({ status: 'ok' });
  });
});

if (bwrapSkip) it.skip(bwrapSkip, () => {});
if (dockerSkip) it.skip(dockerSkip, () => {});
