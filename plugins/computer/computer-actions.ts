/**
 * The computer tool's actions as `xdotool` command lines, after checking that each has the
 * arguments it needs and that its coordinates lie on the screen. Key names are read the way
 * OpenManus's tool reads them (`enter`, `ctrl+c`) and turned into X key names.
 */
import { ToolError } from 'manus-runtime';
import { shellWord } from './desktop-script.js';

export const computerActions = ['move_to', 'click', 'scroll', 'typing', 'press', 'hotkey', 'drag_to', 'screenshot'] as const;
export type ComputerAction = (typeof computerActions)[number];

export interface ComputerInput {
  action: ComputerAction;
  x?: number;
  y?: number;
  button?: 'left' | 'right' | 'middle';
  num_clicks?: number;
  direction?: 'up' | 'down' | 'left' | 'right';
  amount?: number;
  text?: string;
  key?: string;
  keys?: string;
}

export interface PlannedAction {
  /** The command line run in the desktop's session. */
  command: string;
  /** What was done, for the model. */
  report: string;
  timeoutMs: number;
}

const buttonNumbers = { left: 1, middle: 2, right: 3 } as const;
const wheelButtons = { up: 4, down: 5, left: 6, right: 7 } as const;
const baseTimeoutMs = 10_000;
const typingDelayMs = 12;

/** Names OpenManus and pyautogui use, and punctuation, as X key names. */
const keyAliases: Readonly<Record<string, string>> = {
  enter: 'Return', return: 'Return', esc: 'Escape', escape: 'Escape', tab: 'Tab', space: 'space',
  backspace: 'BackSpace', delete: 'Delete', del: 'Delete', insert: 'Insert',
  up: 'Up', down: 'Down', left: 'Left', right: 'Right', home: 'Home', end: 'End',
  pageup: 'Prior', page_up: 'Prior', pagedown: 'Next', page_down: 'Next',
  ctrl: 'ctrl', control: 'ctrl', alt: 'alt', shift: 'shift', option: 'alt',
  cmd: 'super', command: 'super', win: 'super', super: 'super', meta: 'super',
  capslock: 'Caps_Lock', caps_lock: 'Caps_Lock',
  '/': 'slash', '\\': 'backslash', '.': 'period', ',': 'comma', '-': 'minus', '=': 'equal',
  ';': 'semicolon', "'": 'apostrophe', '`': 'grave', '[': 'bracketleft', ']': 'bracketright',
};

export function planAction(input: ComputerInput, screen: { width: number; height: number }): PlannedAction {
  switch (input.action) {
    case 'move_to': {
      const { x, y } = point(input, screen);
      return { command: `xdotool mousemove ${x} ${y}`, report: `Moved the pointer to (${x}, ${y}).`, timeoutMs: baseTimeoutMs };
    }
    case 'click': {
      const button = input.button ?? 'left';
      const clicks = input.num_clicks ?? 1;
      const at = optionalPoint(input, screen);
      const move = at ? `mousemove ${at.x} ${at.y} sleep 0.05 ` : '';
      const where = at ? ` at (${at.x}, ${at.y})` : ' where the pointer is';
      return {
        command: `xdotool ${move}click --repeat ${clicks} --delay 80 ${buttonNumbers[button]}`,
        report: `Clicked the ${button} button ${clicks === 1 ? 'once' : `${clicks} times`}${where}.`,
        timeoutMs: baseTimeoutMs,
      };
    }
    case 'scroll': {
      const direction = required(input.direction, 'direction', 'scroll');
      const amount = input.amount ?? 3;
      const at = optionalPoint(input, screen);
      const move = at ? `mousemove ${at.x} ${at.y} sleep 0.05 ` : '';
      return {
        command: `xdotool ${move}click --repeat ${amount} --delay 30 ${wheelButtons[direction]}`,
        report: `Scrolled ${direction} by ${amount}${at ? ` at (${at.x}, ${at.y})` : ''}.`,
        timeoutMs: baseTimeoutMs,
      };
    }
    case 'typing': {
      const text = required(input.text, 'text', 'typing');
      // Sent as base64 through a pipe: no character of the text reaches the shell or xdotool's options.
      const encoded = Buffer.from(text, 'utf8').toString('base64');
      return {
        command: `printf %s ${shellWord(encoded)} | base64 -d | xdotool type --delay ${typingDelayMs} --file -`,
        report: `Typed ${[...text].length} characters.`,
        timeoutMs: baseTimeoutMs + [...text].length * typingDelayMs * 4,
      };
    }
    case 'press': {
      const key = keyCombination(required(input.key, 'key', 'press'), 'key');
      return { command: `xdotool key --delay 40 ${key}`, report: `Pressed ${key}.`, timeoutMs: baseTimeoutMs };
    }
    case 'hotkey': {
      const keys = keyCombination(required(input.keys, 'keys', 'hotkey'), 'keys');
      return { command: `xdotool key --delay 40 ${keys}`, report: `Pressed ${keys}.`, timeoutMs: baseTimeoutMs };
    }
    case 'drag_to': {
      const { x, y } = point(input, screen);
      return {
        command: `xdotool mousedown 1 sleep 0.1 mousemove ${x} ${y} sleep 0.1 mouseup 1`,
        report: `Dragged from where the pointer was to (${x}, ${y}).`,
        timeoutMs: baseTimeoutMs,
      };
    }
    case 'screenshot':
      throw new Error('A screenshot is taken by the desktop, not planned as a command.');
  }
}

function required<T>(value: T | undefined, name: string, action: string): T {
  if (value === undefined || value === '') throw new ToolError(`The ${action} action needs \`${name}\`.`, 'argument_missing');
  return value;
}

function point(input: ComputerInput, screen: { width: number; height: number }): { x: number; y: number } {
  const at = optionalPoint(input, screen);
  if (!at) throw new ToolError(`The ${input.action} action needs \`x\` and \`y\`.`, 'argument_missing');
  return at;
}

function optionalPoint(input: ComputerInput, screen: { width: number; height: number }): { x: number; y: number } | undefined {
  if (input.x === undefined && input.y === undefined) return undefined;
  if (input.x === undefined || input.y === undefined) throw new ToolError('Give both `x` and `y`, or neither.', 'argument_invalid');
  if (input.x >= screen.width || input.y >= screen.height) {
    throw new ToolError(`(${input.x}, ${input.y}) is off the screen, which is ${screen.width}x${screen.height} (x from 0 to ${screen.width - 1}, y from 0 to ${screen.height - 1}).`, 'argument_invalid');
  }
  return { x: input.x, y: input.y };
}

/** `ctrl+shift+t`, `Return`, `enter`: each part an X key name or a known alias. */
export function keyCombination(text: string, name: string): string {
  const parts = text.trim().split(/\s*\+\s*/).filter((part) => part !== '');
  const plus = text.trim() === '+' ? ['plus'] : undefined;
  const names = (plus ?? parts).map((part) => keyAliases[part.toLowerCase()] ?? keyAliases[part] ?? part);
  const bad = names.find((part) => !/^[A-Za-z0-9_]+$/.test(part));
  if (names.length === 0 || bad !== undefined) {
    throw new ToolError(
      `\`${name}\` must be a key name or a combination joined with +, such as enter, ctrl+c or ctrl+shift+t (not ${JSON.stringify(text)}).`,
      'argument_invalid',
    );
  }
  return names.join('+');
}
