/**
 * `sandbox.user`: who sandboxed commands run as. Ids are numbers (a name means different users
 * inside and outside an image). Root is never allowed, nor a privileged group: a system group
 * (below 1000, where Debian, Ubuntu and Fedora allocate them) may be `shadow`, `disk`, `sudo`,
 * `adm` or `docker`, whose members read password hashes, raw disks, logs or control the host.
 * `nogroup` (65534) owns nothing and stays allowed.
 */

export interface SandboxUser {
  uid: number;
  gid: number;
}

/** Group ids from here up are ordinary users' groups; below are the system's. */
export const firstUserGroupId = 1000;

const nobodyGroupId = 65534;

/** Parses "uid" or "uid:gid", or says what is wrong with it. */
export function readSandboxUser(text: string): SandboxUser | { problem: string } {
  const match = /^(\d+)(?::(\d+))?$/.exec(text.trim());
  if (!match) return { problem: `sandbox user "${text}" must be "uid" or "uid:gid" with numeric ids` };
  const uid = Number(match[1]);
  const gid = match[2] === undefined ? uid : Number(match[2]);
  if (uid === 0) return { problem: `sandbox user "${text}" must not be root (uid 0): commands run unprivileged` };
  if (gid === 0) return { problem: `sandbox user "${text}" has the root group (gid 0), which reads and writes what root's group may: give a gid of ${firstUserGroupId} or above` };
  if (gid < firstUserGroupId && gid !== nobodyGroupId) {
    return { problem: `sandbox user "${text}" has the system group ${gid}, which may be privileged (shadow, disk, sudo, adm, docker): give a gid of ${firstUserGroupId} or above, or ${nobodyGroupId}` };
  }
  return { uid, gid };
}
