#!/usr/bin/env bash
# Installs Debian packages for the project's scripts (engines, Chromium),
# once, however many scripts ask at the same moment.
#
#   hack/apt-install.sh PACKAGE[=COMMAND]...
#
# A package is needed when dpkg does not have it installed and, if COMMAND
# is given, COMMAND is not on PATH either (an engine installed some other
# way counts). The check runs under the lock too: a binary another install
# has unpacked but not yet configured must not count as installed.
#
# `go test -p 4` runs suites side by side, and several of them install
# packages on a fresh machine. Installs are serialized by a lock file in
# the cache directory: the first caller installs, the others wait for it,
# then find the packages there and install nothing. apt-get itself waits
# for dpkg's lock (DPkg::Lock::Timeout), for any other apt on the machine.
# A failed install prints apt's log and exits non-zero.
set -euo pipefail
log() { echo "apt-install: $*" >&2; }
[[ $# -gt 0 ]] || { echo "usage: hack/apt-install.sh PACKAGE[=COMMAND]..." >&2; exit 2; }

CACHE_DIR=${EDGEPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeplane}
# How long to wait for the project's lock and for dpkg's (seconds): a cold
# install of Chromium or Docker Engine takes a few minutes.
WAIT=${EDGEPLANE_APT_WAIT:-900}

installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]; }
# missing prints the packages of "$@" that are needed.
missing() {
  local a pkg cmd out=()
  for a in "$@"; do
    pkg=${a%%=*} cmd=
    [[ "$a" != *=* ]] || cmd=${a#*=}
    installed "$pkg" && continue
    [[ -n "$cmd" ]] && command -v "$cmd" >/dev/null && continue
    out+=("$pkg")
  done
  echo "${out[*]}"
}

# The lock is taken even to check: a check beside a running install could
# see a half-installed package.
mkdir -p "$CACHE_DIR/locks"
exec 9>"$CACHE_DIR/locks/apt.lock"
if ! flock -n 9; then
  log "another install runs; waiting for it (up to ${WAIT}s)"
  flock -w "$WAIT" 9 || { log "the install lock $CACHE_DIR/locks/apt.lock was held for ${WAIT}s"; exit 1; }
fi
read -r -a todo <<<"$(missing "$@")"
[[ ${#todo[@]} -gt 0 ]] || exit 0
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
  log "missing Debian packages: ${todo[*]}; install them (as root: apt-get install ${todo[*]})"
  exit 1
fi

aptlog=$(mktemp)
trap 'rm -f "$aptlog"' EXIT
export DEBIAN_FRONTEND=noninteractive
apt=(apt-get -o "DPkg::Lock::Timeout=$WAIT" -y --no-install-recommends)
log "installing ${todo[*]}"
if ! "${apt[@]}" install "${todo[@]}" >"$aptlog" 2>&1; then
  # A fresh machine's package lists may be missing or stale.
  log "install failed; updating the package lists and trying again"
  apt-get -o "DPkg::Lock::Timeout=$WAIT" update >>"$aptlog" 2>&1 || true
  if ! "${apt[@]}" install "${todo[@]}" >>"$aptlog" 2>&1; then
    cat "$aptlog" >&2
    log "installing ${todo[*]} failed (apt's log above)"
    exit 1
  fi
fi
log "installed ${todo[*]}"
