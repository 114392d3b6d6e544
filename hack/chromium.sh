#!/usr/bin/env bash
# Prints the path of a Chromium for the console's browser suite, installing
# Debian's chromium package (and a font, for readable screenshots) when it
# is absent, as hack/engine.sh does for engines. $CHROMIUM names another.
# The suite also needs nsenter (util-linux), which starts the browser in a
# network namespace of its own, and ip (iproute2), with which a spec
# changes the host's network; as root they are installed too, whichever
# Chromium runs.
# EDGEPLANE_SKIP_BROWSER=1 makes the suite skip instead.
set -euo pipefail
log() { echo "chromium: $*" >&2; }

apt=
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  apt=1
  # Serialized with every other install of the project's scripts; waits
  # for one that runs, and installs nothing when the packages are there.
  pkgs=(util-linux=nsenter iproute2=ip)
  [[ -n "${CHROMIUM:-}" ]] || pkgs+=(chromium fonts-dejavu-core)
  "$(dirname "$0")/apt-install.sh" "${pkgs[@]}"
fi
if [[ -n "${CHROMIUM:-}" ]]; then
  [[ -x "$CHROMIUM" ]] || { log "CHROMIUM=$CHROMIUM is not an executable"; exit 1; }
  echo "$CHROMIUM"
  exit 0
fi
if [[ -n "$apt" ]]; then
  echo /usr/bin/chromium
  exit 0
fi
for c in /usr/bin/chromium /usr/bin/chromium-browser; do
  if [[ -x "$c" ]]; then
    echo "$c"
    exit 0
  fi
done
log "no Chromium; install Debian's chromium package (as root: apt-get install chromium), set CHROMIUM to one, or set EDGEPLANE_SKIP_BROWSER=1 to skip the console's browser suite"
exit 1
