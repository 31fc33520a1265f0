#!/bin/sh
# Starts a private Docker daemon for the docker sandbox and builds its base image.
#
# Idempotent: a daemon that is already answering on the socket is reused, and an image that
# already exists is kept. The debootstrap root filesystem is cached as a tarball so a rebuilt
# data root does not need the Debian mirror again.
#
# The image holds the Debian packages listed in runtime/config/sandbox-image-packages.txt, and
# its tag is the suite and a hash of that list, the same name the runtime uses as its default
# image (runtime/config/sandbox-image.ts): a changed list builds a new image.
#
# `setup-docker.sh --print-image` prints the image name and exits, needing neither root nor Docker.
#
# The daemon runs without iptables, IP forwarding, masquerading or a bridge: sandbox containers
# use NetworkMode "none", so none of those are needed, and none of them touch the host's network.
#
# Environment (all optional):
#   MANUS_DOCKER_STATE_DIR  daemon data, exec root, socket, pid and log   (/var/lib/manus-docker)
#   MANUS_SANDBOX_CACHE     where the root filesystem tarball is cached   (/var/cache/manus-sandbox)
#   MANUS_SANDBOX_IMAGE     name of the image to build      (manus-sandbox:bookworm-<hash of the list>)
#   MANUS_DEBIAN_MIRROR     Debian mirror for debootstrap   (the first Debian mirror in this
#                           machine's apt sources, else http://deb.debian.org/debian; see
#                           .ci/debian-mirror.sh)
#
# Prints DOCKER_HOST=unix://... on its last line and writes the same line to
# $MANUS_DOCKER_STATE_DIR/docker-host, so callers can `. "$MANUS_DOCKER_STATE_DIR/docker-host"`.
set -eu

suite=bookworm
package_list="$(dirname "$0")/../runtime/config/sandbox-image-packages.txt"
# One name a line, without comments and blank lines, hashed as runtime/config/sandbox-image.ts does.
packages="$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$package_list" | grep -v '^$')"
package_hash="$(printf '%s\n' "$packages" | sha256sum | cut -c1-12)"
image="${MANUS_SANDBOX_IMAGE:-manus-sandbox:$suite-$package_hash}"
if [ "${1:-}" = --print-image ]; then
  printf '%s\n' "$image"
  exit 0
fi

state_dir="${MANUS_DOCKER_STATE_DIR:-/var/lib/manus-docker}"
cache_dir="${MANUS_SANDBOX_CACHE:-/var/cache/manus-sandbox}"
mirror="$(sh "$(dirname "$0")/debian-mirror.sh")"

socket="$state_dir/docker.sock"
pid_file="$state_dir/dockerd.pid"
log_file="$state_dir/dockerd.log"
host_file="$state_dir/docker-host"
rootfs_tarball="$cache_dir/$suite-minbase-$package_hash.tar"

say() { printf '%s\n' "setup-docker: $*" >&2; }
fail() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "must run as root (dockerd and debootstrap need it)"
for command in dockerd docker debootstrap tar; do
  command -v "$command" >/dev/null 2>&1 || fail "'$command' is not installed"
done

docker_cli() { docker -H "unix://$socket" "$@"; }

daemon_answers() { [ -S "$socket" ] && docker_cli version >/dev/null 2>&1; }

start_daemon() {
  mkdir -p "$state_dir/data" "$state_dir/exec"
  say "starting dockerd (log: $log_file)"
  # setsid detaches the daemon from this script's session so it outlives the caller's shell.
  setsid dockerd \
    --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
    --data-root "$state_dir/data" --exec-root "$state_dir/exec" \
    --pidfile "$pid_file" -H "unix://$socket" \
    >"$log_file" 2>&1 </dev/null &
  daemon_pid=$!
  waited=0
  until daemon_answers; do
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
      tail -n 20 "$log_file" >&2
      fail "dockerd exited during start-up; see $log_file"
    fi
    waited=$((waited + 1))
    [ "$waited" -le 60 ] || fail "dockerd did not answer within 60 s; see $log_file"
    sleep 1
  done
  say "dockerd is up after about $waited s (pid $(cat "$pid_file"))"
}

build_rootfs_tarball() {
  mkdir -p "$cache_dir"
  work_dir="$(mktemp -d "$cache_dir/rootfs.XXXXXX")"
  trap 'rm -rf "$work_dir"' EXIT
  say "debootstrap $suite (minbase + $(printf '%s' "$packages" | tr '\n' ' ')) from $mirror"
  debootstrap --variant=minbase --include="$(printf '%s' "$packages" | tr '\n' ',')" "$suite" "$work_dir/root" "$mirror" >"$work_dir/debootstrap.log" 2>&1 \
    || { tail -n 20 "$work_dir/debootstrap.log" >&2; fail "debootstrap failed"; }
  # Package caches and lists only make the image bigger.
  rm -rf "$work_dir/root/var/cache/apt/archives/"*.deb "$work_dir/root/var/lib/apt/lists/"*
  tar -C "$work_dir/root" -c . >"$work_dir/rootfs.tar"
  mv "$work_dir/rootfs.tar" "$rootfs_tarball"
  rm -rf "$work_dir"
  trap - EXIT
}

if daemon_answers; then
  say "reusing the daemon on $socket"
else
  if [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
    fail "dockerd (pid $(cat "$pid_file")) is running but does not answer on $socket; run .ci/stop-docker.sh first"
  fi
  start_daemon
fi

if docker_cli image inspect "$image" >/dev/null 2>&1; then
  say "image $image already exists"
else
  if [ -f "$rootfs_tarball" ]; then
    say "using the cached root filesystem $rootfs_tarball"
  else
    build_rootfs_tarball
  fi
  say "importing $image"
  docker_cli import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/bin/sh"]' \
    - "$image" <"$rootfs_tarball" >/dev/null
fi

printf 'DOCKER_HOST=unix://%s\n' "$socket" >"$host_file"
cat "$host_file"
