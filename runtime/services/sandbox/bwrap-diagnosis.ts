/**
 * Why bubblewrap cannot be used here, and what the user can do about it. "Not installed" and
 * "installed but not allowed to create namespaces" need different fixes: on Ubuntu 24.04 and later
 * (GitHub's default runner among them) AppArmor restricts unprivileged user namespaces, and bwrap
 * fails with "setting up uid map: Permission denied" or "loopback: Failed RTM_NEWADDR".
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export type BwrapProblem = 'missing' | 'blocked' | 'failed';

export interface BwrapDiagnosis {
  problem: BwrapProblem;
  /** What went wrong, in a few words. */
  reason: string;
  /** What the user can do, as the start of a sentence that other fixes can follow. */
  fix: string;
}

const blockedPatterns = [
  /setting up uid map: Permission denied/i,
  /RTM_NEWADDR/i,
  /No permissions to create new namespace/i,
  /Creating new namespace failed/i,
  /unshare.*Operation not permitted/i,
  /user namespaces? (?:are|is) (?:not|disabled)/i,
];

export function diagnoseBwrapFailure(detail: string, pathVariable = process.env.PATH ?? ''): BwrapDiagnosis {
  if (!isOnPath('bwrap', pathVariable)) {
    return { problem: 'missing', reason: 'bubblewrap is not installed', fix: 'install bubblewrap (apt-get install bubblewrap)' };
  }
  if (blockedPatterns.some((pattern) => pattern.test(detail))) {
    return {
      problem: 'blocked',
      reason: detail,
      fix:
        'bubblewrap is installed but may not create user namespaces here; on Ubuntu 24.04 and later AppArmor restricts them: ' +
        'load an AppArmor profile for bwrap (Ubuntu 25.04 ships /etc/apparmor.d/bwrap-userns-restrict), or on a throwaway CI runner ' +
        'run sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0',
    };
  }
  return { problem: 'failed', reason: detail, fix: 'check that bubblewrap works (bwrap --ro-bind / / true)' };
}

function isOnPath(program: string, pathVariable: string): boolean {
  return pathVariable.split(delimiter).some((folder) => {
    if (folder === '') return false;
    try {
      accessSync(join(folder, program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
