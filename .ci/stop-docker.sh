#!/bin/sh
# Stops the daemon started by .ci/setup-docker.sh, by the PID it recorded. Containers and the
# image stay in the data root, so the next setup is quick.
set -eu

state_dir="${MANUS_DOCKER_STATE_DIR:-/var/lib/manus-docker}"
pid_file="$state_dir/dockerd.pid"

say() { printf '%s\n' "stop-docker: $*" >&2; }

if [ ! -f "$pid_file" ]; then
  say "no pid file at $pid_file; nothing to stop"
  exit 0
fi
pid="$(cat "$pid_file")"
if ! kill -0 "$pid" 2>/dev/null; then
  say "dockerd (pid $pid) is not running"
  rm -f "$pid_file"
  exit 0
fi

kill -TERM "$pid"
waited=0
while kill -0 "$pid" 2>/dev/null; do
  waited=$((waited + 1))
  if [ "$waited" -gt 30 ]; then
    say "dockerd did not stop within 30 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    break
  fi
  sleep 1
done
rm -f "$pid_file" "$state_dir/docker-host"
say "stopped dockerd (pid $pid)"
