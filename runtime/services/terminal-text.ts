/**
 * Text that came from outside the runtime (model replies, tool output, page text, MCP replies,
 * recipe files) made safe to print on a terminal: no escape sequence reaches it, so no such text
 * can set the clipboard (OSC 52), plant a link (OSC 8), clear or redraw the screen, move the
 * cursor over earlier lines (`\r`, `\b`) or ring the bell. Every terminal sink passes untrusted
 * text through `terminalText`; JSON output is data and keeps the text as it is.
 */
import stripAnsi from 'strip-ansi';

// Control strings (OSC, DCS, SOS, PM, APC) in their 8-bit forms, which strip-ansi does not know,
// up to their terminator or the end of the text, so that their payload is not left behind as text.
const eightBitControlStrings = /[\u0090\u0098\u009d\u009e\u009f][^\u0007\u009c\u001b]*(?:\u0007|\u009c|\u001b\\|$)/g;
// Every C0 and C1 control but newline and tab, and DEL: what is left once the sequences are gone.
const controlCharacters = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function terminalText(text: string): string {
  return stripAnsi(text.replace(eightBitControlStrings, '')).replace(controlCharacters, '');
}
