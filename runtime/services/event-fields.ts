/**
 * Reading fields of recorded events. An events file is data from disk, written by any version of
 * the runtime or damaged, so every field is checked before use and a wrong one reads as missing.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function recordField(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

export function textField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function numberField(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Who asked for a refused connection (a `connection-refused` event): the tool call, with its command when it was one. */
export function connectionAsker(event: Record<string, unknown>): string {
  const tool = typeof event.tool === 'string' ? event.tool : event.via === 'browser' ? 'the browser' : event.via === 'sandbox' ? 'a sandboxed command' : 'a connection';
  if (typeof event.command !== 'string') return tool;
  const command = event.command.replace(/\s+/g, ' ').trim();
  return `${tool} (${command.length > 60 ? `${command.slice(0, 59)}…` : command})`;
}
