/**
 * Secrets written into YAML. A value in a config file travels into repositories, CI logs and bug
 * reports; `api_key_env` and `headers_env` name environment variables instead. A literal secret
 * is a warning, refused in CI mode, and its value is never printed: messages show it masked.
 */
import type { Diagnostic } from '../contract/errors.js';
import { locate, type YamlSource } from './yaml-source.js';

/** The code of a literal-secret warning, so CI mode can refuse exactly these. */
export const literalSecretCode = 'literal_secret';

const credentialHeaderName = /authorization|api[-_]?key|token|secret|password|credential|cookie/i;
const authorizationScheme = /^(bearer|basic|token)\s+(\S+)/i;
const tokenLookingValue = /\b(sk-|ghp_|github_pat_|xox[abpr]-)[A-Za-z0-9_-]{8,}/;

/** A header that carries a credential: by its name, its scheme (`Bearer ...`) or a well-known token prefix. */
export function isSecretHeader(name: string, value: string): boolean {
  const trimmed = value.trim();
  return trimmed !== '' && (credentialHeaderName.test(name) || authorizationScheme.test(trimmed) || tokenLookingValue.test(trimmed));
}

/** A credential header's value and the secret inside it: the token after the scheme, a basic password. */
export function secretPartsOfHeader(value: string): string[] {
  const parts = [value];
  const scheme = authorizationScheme.exec(value.trim());
  if (!scheme) return parts;
  parts.push(scheme[2]);
  if (scheme[1].toLowerCase() === 'basic') {
    const decoded = Buffer.from(scheme[2], 'base64').toString('utf8');
    const separator = decoded.indexOf(':');
    if (separator >= 0) parts.push(decoded.slice(separator + 1));
  }
  return parts;
}

/** Warnings for the credential headers a profile writes out literally, each at its value. */
export function literalSecretHeaders(profileName: string, headers: Record<string, string>, source: YamlSource): Diagnostic[] {
  return Object.entries(headers)
    .filter(([name, value]) => isSecretHeader(name, value))
    .map(([name, value]) => ({
      severity: 'warning' as const,
      code: literalSecretCode,
      message:
        `model profile '${profileName}' writes a secret into the header '${name}' (${masked(value)}); put the value in an ` +
        `environment variable and name it under headers_env instead (headers_env: { ${name}: ${variableNameFor(name)} })`,
      location: locate(source, ['llm', profileName, 'headers', name]),
    }));
}

/** The literal-secret warnings among `diagnostics` as errors: CI mode refuses to run with them. */
export function literalSecretErrors(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics
    .filter((diagnostic) => diagnostic.code === literalSecretCode)
    .map((diagnostic) => ({ ...diagnostic, severity: 'error', message: `${diagnostic.message}; CI mode does not run with a literal secret` }));
}

function masked(value: string): string {
  const scheme = authorizationScheme.exec(value.trim());
  return scheme ? `${scheme[1]} ****` : '****';
}

function variableNameFor(header: string): string {
  return header.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '') || 'HEADER_VALUE';
}
