/**
 * The hosts a sandbox's `network: {allow: [...]}` names, checked as host patterns once the YAML
 * is read: each one that is not a pattern is an error at its own file, line and column.
 */
import type { Diagnostic } from '../../contract/errors.js';
import type { SandboxSettings } from '../../contract/sandbox-types.js';
import { parseHostPattern } from './host-patterns.js';

export function sandboxHostDiagnostics(sandbox: SandboxSettings | undefined): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  sandbox?.allowHosts?.forEach((text, index) => {
    const pattern = parseHostPattern(text);
    if ('problem' in pattern) diagnostics.push({ severity: 'error', message: `sandbox.network.allow: ${pattern.problem}`, location: sandbox.allowHostLocations?.[index] });
  });
  return diagnostics;
}
