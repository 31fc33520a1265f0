/**
 * The computer tool's settings (`tool_settings.computer`), checked once per call: the screen's
 * size, the programs the desktop starts with, how often the live screen is refreshed, and whether
 * a watch page is served.
 */
import { ToolError } from 'manus-runtime';

export interface ComputerSettings {
  width: number;
  height: number;
  /** Shell command lines started on the desktop, in the workspace, when it starts. */
  programs: string[];
  /** Seconds between refreshes of the run's live screen; 0 refreshes it only after actions. */
  screenIntervalSeconds: number;
  /** Serve a page of the live screen on loopback while the desktop runs. */
  watch: boolean;
}

export const defaultComputerSettings: ComputerSettings = {
  width: 1024,
  height: 768,
  programs: ['xterm'],
  screenIntervalSeconds: 2,
  watch: false,
};

const knownKeys = ['screen_size', 'programs', 'screen_interval', 'watch'];

export function readComputerSettings(settings: Record<string, unknown>): ComputerSettings {
  const unknown = Object.keys(settings).filter((key) => !knownKeys.includes(key));
  if (unknown.length > 0) {
    throw new ToolError(`tool_settings.computer has unknown keys: ${unknown.join(', ')} (known: ${knownKeys.join(', ')}).`, 'settings_invalid');
  }
  const result = { ...defaultComputerSettings };
  if (settings.screen_size !== undefined) {
    const match = typeof settings.screen_size === 'string' ? /^(\d{3,4})x(\d{3,4})$/.exec(settings.screen_size) : null;
    const width = Number(match?.[1]);
    const height = Number(match?.[2]);
    if (!match || width < 320 || height < 240 || width > 3840 || height > 2160) {
      throw new ToolError('tool_settings.computer.screen_size must be WIDTHxHEIGHT between 320x240 and 3840x2160, such as 1024x768.', 'settings_invalid');
    }
    result.width = width;
    result.height = height;
  }
  if (settings.programs !== undefined) {
    const programs = settings.programs;
    if (!Array.isArray(programs) || programs.some((program) => typeof program !== 'string' || program.trim() === '')) {
      throw new ToolError('tool_settings.computer.programs must be a list of command lines, such as [xterm].', 'settings_invalid');
    }
    result.programs = programs as string[];
  }
  if (settings.screen_interval !== undefined) {
    const interval = settings.screen_interval;
    if (typeof interval !== 'number' || !(interval === 0 || (interval >= 0.5 && interval <= 60))) {
      throw new ToolError('tool_settings.computer.screen_interval must be 0 (after actions only) or between 0.5 and 60 seconds.', 'settings_invalid');
    }
    result.screenIntervalSeconds = interval;
  }
  if (settings.watch !== undefined) {
    if (typeof settings.watch !== 'boolean') throw new ToolError('tool_settings.computer.watch must be true or false.', 'settings_invalid');
    result.watch = settings.watch;
  }
  return result;
}
