#!/usr/bin/env bash
# Prints the path of markdownlint-cli2, pinned by
# hack/markdownlint/package-lock.json, installing it from the npm registry
# (npm ci) into a cache outside the repository on first use. Node.js and
# npm come from Debian's packages where the machine lacks them. The lint
# of make test runs it (hack/markdownlint_test.go) with the rules of
# .markdownlint-cli2.jsonc.
#
# markdownlint-cli2 0.22 is the last whose markdownlint runs on Node.js 20;
# 0.23 on need Node.js 22.
set -euo pipefail
log() { echo "markdownlint: $*" >&2; }
here=$(cd "$(dirname "$0")" && pwd)
CACHE_DIR=${EDGEPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeplane}

if ! command -v npm >/dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    "$here/apt-install.sh" nodejs npm
  else
    log "no npm; install Debian's nodejs and npm packages (as root: apt-get install nodejs npm)"
    exit 1
  fi
fi
# Debian before 13 ships Node.js 18, on which markdownlint 0.40 does not
# run: Node.js 20 then comes from the npm registry (the node-linux-ARCH
# package holds the official binary), into the cache, and markdownlint
# runs on it through a wrapper.
node20=""
node_major=$(node --version | sed -E 's/^v([0-9]+).*/\1/')
if (( node_major < 20 )); then
  case $(uname -m) in
    x86_64) narch=x64 ;;
    aarch64) narch=arm64 ;;
    *) log "Node.js $(node --version) is too old: markdownlint-cli2 0.22 needs Node.js 20 or later"; exit 1 ;;
  esac
  nver=20.18.0
  ndir=$CACHE_DIR/node-$nver-$narch
  node20=$ndir/node_modules/node-linux-$narch/bin/node
  if [[ ! -x "$node20" ]]; then
    log "Node.js $(node --version) is too old for markdownlint-cli2 0.22; installing Node.js $nver from the npm registry (node-linux-$narch)"
    mkdir -p "$ndir"
    (cd "$ndir" && npm install --no-save --no-audit --no-fund --loglevel=error "node-linux-$narch@$nver") >&2
  fi
  [[ -x "$node20" ]] || { log "Node.js $nver did not install into $ndir"; exit 1; }
fi

lock=$here/markdownlint/package-lock.json
dir=$CACHE_DIR/markdownlint-$(sha256sum "$lock" | cut -c1-16)
bin=$dir/node_modules/.bin/markdownlint-cli2
if [[ ! -x "$bin" ]]; then
  mkdir -p "$CACHE_DIR"
  tmp=$(mktemp -d "$CACHE_DIR/markdownlint.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cp "$here/markdownlint/package.json" "$lock" "$tmp/"
  log "installing markdownlint-cli2 into $dir"
  (cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) >&2
  # Another install may have finished first: its copy is as good.
  mv -T "$tmp" "$dir" 2>/dev/null || true
fi
if [[ -n "$node20" ]]; then
  wrapper=$dir/markdownlint-cli2-node20
  printf '#!/bin/sh\nexec %q %q "$@"\n' "$node20" "$bin" >"$wrapper.$$"
  chmod +x "$wrapper.$$" && mv -f "$wrapper.$$" "$wrapper"
  echo "$wrapper"
else
  echo "$bin"
fi
