#!/usr/bin/env bash
# Prints the path of a pinned Go tool, installing it from the Go module proxy
# into a cache outside the repository on first use.
#   hack/tool.sh controller-gen|crd-ref-docs
set -euo pipefail

CONTROLLER_TOOLS_VERSION=${CONTROLLER_TOOLS_VERSION:-v0.23.0}
CRD_REF_DOCS_VERSION=${CRD_REF_DOCS_VERSION:-v0.3.0}
CACHE_DIR=${EDGEPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeplane}

case "${1:-}" in
  controller-gen) pkg=sigs.k8s.io/controller-tools/cmd/controller-gen version=$CONTROLLER_TOOLS_VERSION ;;
  crd-ref-docs) pkg=github.com/elastic/crd-ref-docs version=$CRD_REF_DOCS_VERSION ;;
  *) echo "usage: $0 controller-gen|crd-ref-docs" >&2; exit 2 ;;
esac

bin="$CACHE_DIR/bin/$1-$version"
if [[ ! -x "$bin" ]]; then
  # One install at a time; the others wait and find it. It is built in
  # the cache's own directory and renamed into place.
  mkdir -p "$CACHE_DIR/bin" "$CACHE_DIR/locks"
  exec 9>"$CACHE_DIR/locks/tool-$1.lock"
  flock 9
  if [[ ! -x "$bin" ]]; then
    echo "tool: installing $1 $version" >&2
    tmp=$(mktemp -d "$CACHE_DIR/bin/.build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    GOBIN="$tmp" GOFLAGS=-mod=mod GOWORK=off go install "$pkg@$version" >&2
    mv "$tmp/$1" "$bin"
  fi
fi
echo "$bin"
