/**
 * Hides secret values in everything a run writes or sends: events, recordings, terminal output,
 * reports and the model's own input. Copies are found as written, URL-encoded, reversed, in
 * hexadecimal, and in base64 (or base64url), including inside a longer base64 text, where the
 * secret may start at any of the three byte positions of a group. All forms are searched with one regular expression, built once
 * per run, because the trace redacts every event.
 */
import type { ModelProfileConfig } from '../config/types.js';
import { isSecretHeader, secretPartsOfHeader } from '../config/literal-secrets.js';
import { defaultApiKeyEnv } from './model/model-connection.js';

export const redactionMarker = '[redacted]';
/** Shorter values are too likely to occur by chance, and too weak to be worth hiding. */
const minimumSecretLength = 8;
/**
 * A step hands the same text to several sinks (a tool's result to the trace twice and to the
 * model): texts this long are looked up among the last few redacted before they are searched.
 * Shorter ones cost less to search than to look up; longer ones are not kept, to bound memory.
 */
const rememberedLength = { minimum: 256, maximum: 32_768 };
const rememberedTexts = 16;

// AUTHOR is not AUTH: GIT_AUTHOR_NAME holds a name that tools and the model need to see.
const secretNamePattern = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH(?!OR)/i;
const conventionalKeyVariables = ['OPENAI_API_KEY', 'AZURE_OPENAI_API_KEY'];

type Environment = Record<string, string | undefined>;

/**
 * Values worth hiding: every variable named as a key source or handed to a sandbox or a server,
 * and any variable whose name looks like a secret's; with each the password of a URL it holds
 * (`postgres://user:password@host/db`), which a program may print apart from the URL.
 */
export function collectSecrets(environment: Environment, namedVariables: Iterable<string>): string[] {
  const secrets = new Set<string>();
  for (const name of [...namedVariables, ...conventionalKeyVariables]) {
    const value = environment[name];
    if (value) secrets.add(value);
  }
  for (const [name, value] of Object.entries(environment)) {
    if (value && secretNamePattern.test(name)) secrets.add(value);
  }
  return withUrlPasswords(secrets).filter((secret) => secret.length >= minimumSecretLength);
}

/** Whether a variable's name says it holds a secret (`API_KEY`, `DB_PASSWORD`), or its value is a URL with a password. */
export function looksSecret(name: string, value: string): boolean {
  return secretNamePattern.test(name) || urlPassword(value) !== undefined;
}

function urlPassword(value: string): string | undefined {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*?:([^/@\s]+)@/i.exec(value)?.[1];
}

/** The values with the passwords (as written, and decoded) of those that are URLs with credentials. */
export function withUrlPasswords(values: Iterable<string>): string[] {
  const all = new Set<string>();
  for (const value of values) {
    all.add(value);
    const password = urlPassword(value);
    if (!password) continue;
    all.add(password);
    try {
      all.add(decodeURIComponent(password));
    } catch {
      // A malformed escape: the password as written is already kept.
    }
  }
  return [...all];
}

/** The environment variables a model profile reads secrets from. */
function secretVariablesOf(profile: ModelProfileConfig): string[] {
  return [defaultApiKeyEnv(profile), ...Object.values(profile.headersEnv ?? {})];
}

/** Text that streams in pieces: a secret split across two pieces is still hidden. */
export interface RedactedStream {
  /** The part of the text so far that is safe to show; a tail that may begin a secret is held back. */
  push(text: string): string;
  /** Whatever was held back, redacted: the stream has ended. */
  end(): string;
}

export class SecretRedactor {
  private readonly pattern?: RegExp;
  /** The same alternatives without the global flag, for probing a small window. */
  private readonly probe?: RegExp;
  /** The length of the longest form searched for. */
  private readonly longest: number;
  /** Texts redacted lately and what each became, oldest first. */
  private readonly recent = new Map<string, string>();

  constructor(secrets: Iterable<string>) {
    const forms = new Set<string>();
    for (const secret of secrets) {
      if (secret.length >= minimumSecretLength) for (const form of encodedForms(secret)) forms.add(form);
    }
    // Longest first: at any position the alternation then takes the longest form that matches.
    const ordered = [...forms].sort((left, right) => right.length - left.length);
    this.longest = ordered[0]?.length ?? 0;
    if (ordered.length === 0) return;
    const source = ordered.map(escapeRegExp).join('|');
    this.pattern = new RegExp(source, 'g');
    this.probe = new RegExp(source);
  }

  /** The secrets a run sees: its profile's key and header variables, literal credential headers, and the environment's secret-looking variables. */
  static forRun(profile: ModelProfileConfig, environment: Environment, otherSecretVariables: readonly string[] = []): SecretRedactor {
    return SecretRedactor.forProfiles([profile], environment, otherSecretVariables);
  }

  /** The secrets of several profiles at once, for showing runs recorded earlier with any of them. */
  /**
   * `otherSecretVariables`: variables handed to a sandbox (`pass_env`) or a server; `otherSecrets`:
   * values written out for a server (an MCP server's literal `env`).
   */
  static forProfiles(
    profiles: Iterable<ModelProfileConfig>,
    environment: Environment,
    otherSecretVariables: readonly string[] = [],
    otherSecrets: readonly string[] = [],
  ): SecretRedactor {
    const all = [...profiles];
    const headerValues = all.flatMap((profile) => [
      ...Object.entries(profile.headers).filter(([name, value]) => isSecretHeader(name, value)).map(([, value]) => value),
      ...Object.values(profile.headersEnv ?? {}).map((variable) => environment[variable] ?? ''),
    ]);
    return new SecretRedactor([
      ...collectSecrets(environment, [...all.flatMap(secretVariablesOf), ...otherSecretVariables]),
      ...headerValues.flatMap(secretPartsOfHeader),
      ...withUrlPasswords(otherSecrets),
    ]);
  }

  get active(): boolean {
    return this.pattern !== undefined;
  }

  redact(text: string): string {
    if (!this.pattern || text.length < minimumSecretLength) return text;
    if (text.length < rememberedLength.minimum || text.length > rememberedLength.maximum) return this.scan(text, true).text;
    const known = this.recent.get(text);
    if (known !== undefined) return known;
    const redacted = this.scan(text, true).text;
    if (this.recent.size === rememberedTexts) this.recent.delete(this.recent.keys().next().value!);
    this.recent.set(text, redacted);
    return redacted;
  }

  /**
   * A copy of a JSON-like value with every string (keys included) redacted; the value itself when
   * nothing changed. Other objects are taken as JSON would write them.
   */
  redactValue<T>(value: T): T {
    return this.pattern ? (this.walk(value) as T) : value;
  }

  stream(): RedactedStream {
    let pending = '';
    return {
      push: (text) => {
        if (!this.pattern) return text;
        const scanned = this.scan(pending + text, false);
        pending = scanned.rest;
        return scanned.text;
      },
      end: () => {
        const rest = this.redact(pending);
        pending = '';
        return rest;
      },
    };
  }

  /**
   * Replaces every form found. Overlapping secrets are hidden as one span, so no part of either
   * shows. When the text is not `final`, a tail that may still grow into a form is returned as
   * `rest` instead of being decided now.
   */
  private scan(text: string, final: boolean): { text: string; rest: string } {
    const pattern = this.pattern!;
    // A form starting before `limit` lies wholly inside the text, whatever follows it.
    const limit = final ? text.length : text.length - this.longest + 1;
    let output = '';
    let shown = 0;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null && match.index < limit; match = pattern.exec(text)) {
      const start = match.index;
      const end = this.spanEnd(text, start + 1, start + match[0].length);
      if (!final && end + this.longest - 1 > text.length) {
        // Another form might start inside this span and end beyond the text seen so far.
        pattern.lastIndex = 0;
        return { text: output + text.slice(shown, start), rest: text.slice(start) };
      }
      output += text.slice(shown, start) + redactionMarker;
      shown = end;
      pattern.lastIndex = end;
    }
    pattern.lastIndex = 0;
    const safe = Math.max(shown, limit);
    return { text: output + text.slice(shown, safe), rest: text.slice(safe) };
  }

  /** The end of the span covering a match and every form that starts inside it. */
  private spanEnd(text: string, from: number, end: number): number {
    let probeFrom = from;
    while (probeFrom < end) {
      // A form starting before `end` ends within this window.
      const window = text.slice(probeFrom, end + this.longest - 1);
      const inner = this.probe!.exec(window);
      if (!inner || probeFrom + inner.index >= end) break;
      end = Math.max(end, probeFrom + inner.index + inner[0].length);
      probeFrom += inner.index + 1;
    }
    return end;
  }

  private walk(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) {
      const items = value.map((item) => this.walk(item));
      return items.some((item, index) => item !== value[index]) ? items : value;
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      const json = JSON.stringify(value);
      if (json === undefined) return value;
      const parsed: unknown = JSON.parse(json);
      const walked = this.walk(parsed);
      return walked === parsed ? value : walked;
    }
    let changed = false;
    const entries = Object.entries(value).map(([key, entry]) => {
      const redactedKey = this.redact(key);
      const redactedEntry = this.walk(entry);
      if (redactedKey !== key || redactedEntry !== entry) changed = true;
      return [redactedKey, redactedEntry] as const;
    });
    return changed ? Object.fromEntries(entries) : value;
  }
}

/**
 * The secret, its URL-encoded, reversed and hexadecimal forms, and the parts of its base64 and
 * base64url forms that do not depend on neighbouring bytes. Each is one more fixed string in the
 * one pattern; a secret cut in pieces, or encoded any other way, is not found (docs/security.md).
 */
function encodedForms(secret: string): string[] {
  const hexadecimal = Buffer.from(secret, 'utf8').toString('hex');
  const forms = [secret, encodeURIComponent(secret), [...secret].reverse().join(''), hexadecimal, hexadecimal.toUpperCase()];
  const bytes = Buffer.from(secret, 'utf8');
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Characters before `first` carry bits of the filler bytes; from `last` on, bits of whatever follows the secret.
    const first = Math.ceil((offset * 4) / 3);
    const last = Math.floor(((offset + bytes.length) * 4) / 3);
    const stable = encoded.slice(first, last);
    forms.push(stable, stable.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
