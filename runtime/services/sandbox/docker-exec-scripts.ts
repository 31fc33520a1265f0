/**
 * `docker exec` has no way to kill what it started, and background children outlive the exec.
 * Every exec therefore carries a random token in its environment, which its children inherit,
 * and the processes of one exec are found by that token in /proc/<pid>/environ and killed.
 * Needs only sh, grep (GNU, for -z) and /proc, which every Debian-based image has.
 */

export const execTokenVariable = 'MANUS_EXEC_TOKEN';

/** Kills every process whose initial environment holds the token in $1, except the caller. */
const killByToken = `
kill_token() {
  for round in 1 2 3 4 5; do
    found=
    for file in $(grep -lsxzF "${execTokenVariable}=$1" /proc/[0-9]*/environ); do
      pid=\${file#/proc/}
      pid=\${pid%/environ}
      [ "$pid" = "$$" ] && continue
      # A process that is already gone (such as the subshell that ran grep) does not count.
      kill -9 "$pid" 2>/dev/null && found=yes
    done
    [ -z "$found" ] && return 0
  done
  return 1
}`;

/**
 * Runs "$@", then kills whatever it left running, then exits with its status. The wrapper's own
 * /proc environ keeps the token, so it skips itself; the variable is unset first so grep, which
 * it starts, does not carry it.
 */
export const execWrapperScript = `${killByToken}
"$@"
status=$?
token=$${execTokenVariable}
unset ${execTokenVariable}
kill_token "$token"
exit $status
`;

/** Kills every process of the exec whose token is $1; exits non-zero when some survive. */
export const execKillerScript = `${killByToken}
kill_token "$1"
`;
