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
