#!/usr/bin/env bash
# Runs a command with one core kept busy beside it the whole time, as a
# contributor's machine that builds something else, and stops the busy
# loop when the command ends, however it ends.
#   hack/busy.sh COMMAND [ARG...]
set -euo pipefail
[[ $# -gt 0 ]] || { echo "usage: hack/busy.sh COMMAND [ARG...]" >&2; exit 2; }
# A shell's busy loop: no package to install, one core, nothing else.
bash -c 'while :; do :; done' &
busy=$!
trap 'kill "$busy" 2>/dev/null || true' EXIT
echo "busy: one core kept busy by pid $busy" >&2
set +e
"$@"
rc=$?
exit "$rc"
