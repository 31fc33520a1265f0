/** What an import reports besides the file it writes. Messages name settings, never their values. */
import type { SourceLocation } from '../../contract/errors.js';

export interface ImportFinding {
  /** The OpenManus setting, as `[section] key`. */
  setting: string;
  message: string;
  location: SourceLocation;
}

/** An environment variable the user sets to the value of a secret the import did not copy. */
export interface KeyVariable {
  name: string;
  /** The settings whose value it stands for. */
  settings: string[];
  /** Said beside the variable, e.g. that any value works for Ollama. */
  hint?: string;
}

export class ImportReport {
  /** Settings that were not carried over, each with the reason. */
  readonly unmapped: ImportFinding[] = [];
  /** Settings carried over with a change the user should know about. */
  readonly notes: ImportFinding[] = [];
  readonly variables: KeyVariable[] = [];

  notMapped(setting: string, message: string, location: SourceLocation): void {
    addOnce(this.unmapped, { setting, message, location });
  }

  note(setting: string, message: string, location: SourceLocation): void {
    addOnce(this.notes, { setting, message, location });
  }

  /** Records that `name` stands for `setting`; one variable may stand for equal values of several. */
  variable(name: string, setting: string, hint?: string): void {
    const known = this.variables.find((variable) => variable.name === name);
    if (known) {
      if (!known.settings.includes(setting)) known.settings.push(setting);
    }
    else this.variables.push({ name, settings: [setting], ...(hint ? { hint } : {}) });
  }
}

/** A setting of `[llm]` that named sections inherit is reported once, not once per section. */
function addOnce(findings: ImportFinding[], finding: ImportFinding): void {
  if (!findings.some((known) => known.setting === finding.setting && known.message === finding.message)) findings.push(finding);
}

/** `[llm.vision] model`, as a message names a setting. */
export function settingName(section: readonly string[], key?: string): string {
  const header = section.length === 0 ? '' : `[${section.join('.')}]`;
  return key === undefined ? header : header ? `${header} ${key}` : key;
}

/** An environment variable name from words: OPENMANUS_LLM_VISION_API_KEY. */
export function variableName(...words: string[]): string {
  return words.map((word) => word.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '')).filter(Boolean).join('_');
}
