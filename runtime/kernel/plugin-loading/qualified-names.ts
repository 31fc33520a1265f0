/**
 * Names a recipe qualifies with the pack it means: `weather@acme-weather` is the tool (or agent)
 * `weather` of the pack `acme-weather`; `weather@@acme/weather` of the scoped pack `@acme/weather`.
 */

export function splitQualifiedName(qualified: string): { name: string; pack?: string } {
  const at = qualified.indexOf('@', 1);
  if (at <= 0 || at === qualified.length - 1) return { name: qualified };
  return { name: qualified.slice(0, at), pack: qualified.slice(at + 1) };
}

export function qualifiedName(name: string, pack: string): string {
  return `${name}@${pack}`;
}

/** The name a qualified name stands for: what the model sees and permissions name. */
export function unqualifiedName(qualified: string): string {
  return splitQualifiedName(qualified).name;
}
