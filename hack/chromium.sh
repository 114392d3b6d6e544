#!/usr/bin/env bash
# Prints the path of a Chromium for the console's browser suite, installing
# Debian's chromium package (and a font, for readable screenshots) when it
# is absent, as hack/engine.sh does for engines. $CHROMIUM names another.
# EDGEPLANE_SKIP_BROWSER=1 makes the suite skip instead.
set -euo pipefail
log() { echo "chromium: $*" >&2; }

for c in "${CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
  if [[ -n "$c" && -x "$c" ]]; then
    echo "$c"
    exit 0
  fi
done
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
  log "no Chromium; install Debian's chromium package (as root: apt-get install chromium), set CHROMIUM to one, or set EDGEPLANE_SKIP_BROWSER=1 to skip the console's browser suite"
  exit 1
fi
aptlog=$(mktemp)
trap 'rm -f "$aptlog"' EXIT
log "installing chromium from Debian packages"
export DEBIAN_FRONTEND=noninteractive
pkgs=(chromium fonts-dejavu-core)
if ! apt-get install -y --no-install-recommends "${pkgs[@]}" >"$aptlog" 2>&1; then
  apt-get update >>"$aptlog" 2>&1
  apt-get install -y --no-install-recommends "${pkgs[@]}" >>"$aptlog" 2>&1 || {
    cat "$aptlog" >&2
    exit 1
  }
fi
echo /usr/bin/chromium
