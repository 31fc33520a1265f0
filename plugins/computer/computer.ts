/**
 * Computer use: the mouse, keyboard and screen of a virtual desktop that runs in the run's
 * sandbox, with OpenManus's actions. The desktop starts on the first call and is stopped, with
 * every program on it, when the run ends. A screenshot goes back as an image, which the loop
 * shows to vision model profiles only, as it does the browser's.
 */
import { defineTool, ToolError } from 'manus-runtime';
import type { Sandbox, ToolContext, ToolResult } from 'manus-runtime';
import { computerActions, planAction } from './computer-actions.js';
import { checkDesktop } from './computer-doctor.js';
import { readComputerSettings, type ComputerSettings } from './computer-settings.js';
import { Desktop } from './desktop.js';
import { LiveScreen } from './live-screen.js';
import { startScreenWatch, type ScreenWatch } from './screen-watch.js';

const desktopResourceKey = 'computer.desktop';
const watchRefreshSeconds = 1;

interface RunningDesktop {
  desktop: Desktop;
  live: LiveScreen;
  watch?: ScreenWatch;
}

export default defineTool({
  name: 'computer',
  description: [
    'Use a virtual desktop with the mouse and keyboard, as a person would: move_to, click, scroll, typing, press,',
    'hotkey, drag_to, and screenshot to see the screen. Coordinates are pixels from the top-left corner.',
    'The desktop starts with a terminal (xterm) in the workspace; take a screenshot first to see where things are.',
  ].join(' '),
  guide: [
    'Actions and their arguments:',
    '- screenshot: the whole screen as an image.',
    '- move_to {x, y}: move the pointer.',
    '- click {x?, y?, button?: left|right|middle, num_clicks?: 1-3}: click where given, or where the pointer is.',
    '- scroll {direction: up|down|left|right, amount?: wheel steps (default 3), x?, y?}.',
    '- typing {text}: type text into the focused window; a newline presses Enter.',
    '- press {key}: one key or combination: enter, tab, escape, backspace, up, F5, ctrl+c.',
    '- hotkey {keys}: a combination joined with +: ctrl+shift+t, alt+F4.',
    '- drag_to {x, y}: hold the left button from where the pointer is and release it at (x, y).',
    'Take a screenshot after actions whose effect you need to see; the screen may take a moment to change.',
  ].join('\n'),
  parameters: {
    type: 'object',
    properties: {
      action: { type: 'string', enum: [...computerActions], description: 'What to do.' },
      x: { type: 'integer', minimum: 0, description: 'Pixels from the left edge (move_to, click, scroll, drag_to).' },
      y: { type: 'integer', minimum: 0, description: 'Pixels from the top edge (move_to, click, scroll, drag_to).' },
      button: { type: 'string', enum: ['left', 'right', 'middle'], description: 'Mouse button for click. Default left.' },
      num_clicks: { type: 'integer', enum: [1, 2, 3], description: 'Clicks for click: 2 for a double click. Default 1.' },
      direction: { type: 'string', enum: ['up', 'down', 'left', 'right'], description: 'Direction for scroll.' },
      amount: { type: 'integer', minimum: 1, maximum: 50, description: 'Wheel steps for scroll. Default 3.' },
      text: { type: 'string', maxLength: 10_000, description: 'Text for typing.' },
      key: { type: 'string', maxLength: 100, description: 'Key for press: enter, tab, escape, ctrl+c, ...' },
      keys: { type: 'string', maxLength: 100, description: 'Combination for hotkey, joined with +: ctrl+shift+t.' },
    },
    required: ['action'],
    additionalProperties: false,
  },
  // What runs on the desktop (a terminal) may change the workspace, as the bash tool's commands do.
  sequential: 'workspace-commands',
  doctor: checkDesktop,
  async execute(input, context) {
    const settings = readComputerSettings(context.settings);
    // A call with bad arguments fails before a desktop is started for it.
    const action = input.action === 'screenshot' ? undefined : planAction(input, settings);
    const sandbox = await context.sandbox();
    const running = await desktopFor(sandbox, settings, context);
    const { desktop, live } = running;
    await sandbox.refreshWorkspaceAccess();
    try {
      if (!action) {
        const png = await desktop.screenshot(context.signal);
        await live.keep(png);
        return screenshotResult(png, desktop);
      }
      const { output, status } = await desktop.run(action.command, action.timeoutMs, context.signal);
      if (status !== 0) throw new ToolError(`The ${input.action} action failed (xdotool status ${status ?? 'unknown'}): ${output.trim().slice(0, 1000)}`, 'action_failed');
      if (settings.screenIntervalSeconds === 0) await live.refresh();
      // xdotool warns of a key name it does not know and goes on: the model should hear of it.
      const warning = output.trim();
      return warning ? `${action.report}\n${warning}` : action.report;
    } catch (error) {
      if (!desktop.running) await context.resources.release(desktopResourceKey);
      throw error;
    } finally {
      // A terminal on the desktop may have changed the workspace: ownership and protected paths are checked.
      await sandbox.afterCommand();
    }
  },
});

function screenshotResult(png: Buffer, desktop: Desktop): ToolResult {
  return {
    content: `A screenshot of the desktop (${desktop.width}x${desktop.height} pixels) follows as an image.`,
    images: [{ data: png.toString('base64'), mimeType: 'image/png' }],
  };
}

/** The run's desktop; one whose session has ended is replaced by a fresh one. */
async function desktopFor(sandbox: Sandbox, settings: ComputerSettings, context: ToolContext): Promise<RunningDesktop> {
  const start = () => startDesktop(sandbox, settings, context);
  const existing = await context.resources.get(desktopResourceKey, start, stopDesktop);
  if (existing.desktop.running) return existing;
  await context.resources.release(desktopResourceKey);
  return context.resources.get(desktopResourceKey, start, stopDesktop);
}

async function startDesktop(sandbox: Sandbox, settings: ComputerSettings, context: ToolContext): Promise<RunningDesktop> {
  const desktop = await Desktop.start(sandbox, settings, context.signal);
  context.trace.emit('desktop-start', { display: desktop.display, width: desktop.width, height: desktop.height, sandbox: sandbox.kind });
  const live = new LiveScreen(desktop, context.runDirectory, liveInterval(settings));
  void live.refresh();
  if (!settings.watch) return { desktop, live };
  try {
    const watch = await startScreenWatch(() => live.picture, watchRefreshSeconds);
    const message = `Watch the desktop's screen at ${watch.url}`;
    context.logger.info(message);
    // Shown on the user's terminal by the run's progress lines.
    context.trace.emit('tool-notice', { tool: 'computer', message });
    return { desktop, live, watch };
  } catch (error) {
    live.stop();
    await desktop.stop();
    throw error;
  }
}

/** While a watch page is open, the screen is taken at least as often as the page asks for it. */
function liveInterval(settings: ComputerSettings): number {
  if (!settings.watch) return settings.screenIntervalSeconds;
  return settings.screenIntervalSeconds === 0 ? watchRefreshSeconds : Math.min(settings.screenIntervalSeconds, watchRefreshSeconds);
}

async function stopDesktop(running: RunningDesktop): Promise<void> {
  running.live.stop();
  await running.watch?.close();
  await running.desktop.stop();
}
