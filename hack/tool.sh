#!/usr/bin/env bash
# Prints the path of a pinned Go tool, installing it from the Go module proxy
# into a cache outside the repository on first use.
#   hack/tool.sh controller-gen|crd-ref-docs|cyclonedx-gomod|helm
set -euo pipefail

CONTROLLER_TOOLS_VERSION=${CONTROLLER_TOOLS_VERSION:-v0.23.0}
CRD_REF_DOCS_VERSION=${CRD_REF_DOCS_VERSION:-v0.3.0}
# The SBOMs of make release: CycloneDX's generator for Go, which reads the
# module information the Go toolchain embeds in each binary.
CYCLONEDX_GOMOD_VERSION=${CYCLONEDX_GOMOD_VERSION:-v1.10.0}
# The helm CLI, for the install suite (test/e2e/install): the version of
# Helm's Go library in go.mod, which the chart's own test renders with.
HELM_VERSION=${HELM_VERSION:-v3.22.0}
CACHE_DIR=${EDGEPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeplane}

case "${1:-}" in
  controller-gen) pkg=sigs.k8s.io/controller-tools/cmd/controller-gen version=$CONTROLLER_TOOLS_VERSION ;;
  crd-ref-docs) pkg=github.com/elastic/crd-ref-docs version=$CRD_REF_DOCS_VERSION ;;
  cyclonedx-gomod) pkg=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod version=$CYCLONEDX_GOMOD_VERSION ;;
  helm) pkg=helm.sh/helm/v3/cmd/helm version=$HELM_VERSION ;;
  *) echo "usage: $0 controller-gen|crd-ref-docs|cyclonedx-gomod|helm" >&2; exit 2 ;;
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
