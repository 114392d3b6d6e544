#!/usr/bin/env bash
# Prints a directory holding kube-apiserver, etcd and kubectl for envtest.
#
# The machines that build edgeplane reach only package registries, so the
# binaries setup-envtest would download are built from the Go module proxy
# instead, at pinned versions, and cached outside the repository by version.
# KUBEBUILDER_ASSETS, when set, wins.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.36.3}
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
CACHE_DIR=${EDGEPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeplane}

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

dir="$CACHE_DIR/envtest/k8s-v$K8S_VERSION-etcd-v$ETCD_VERSION"
if [[ -x "$dir/kube-apiserver" && -x "$dir/etcd" && -x "$dir/kubectl" ]]; then
  echo "$dir"
  exit 0
fi

log() { echo "envtest-assets: $*" >&2; }
mkdir -p "$dir" "$CACHE_DIR/locks"
# Suites run side by side (go test ./... without make): one builds, the
# others wait for it and find the binaries. A build goes to a directory
# in the cache and is renamed into place, so no one runs half a binary.
exec 9>"$CACHE_DIR/locks/envtest.lock"
if ! flock -n 9; then
  log "another build of these binaries runs; waiting for it"
  flock 9
fi
if [[ -x "$dir/kube-apiserver" && -x "$dir/etcd" && -x "$dir/kubectl" ]]; then
  echo "$dir"
  exit 0
fi
work=$(mktemp -d "$CACHE_DIR/envtest/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Build output goes to a log that is shown only when a step fails.
buildlog="$work/build.log"
trap 'echo "envtest-assets: build failed; log follows" >&2; cat "$buildlog" >&2' ERR
export GOFLAGS=-mod=mod GOWORK=off

if [[ ! -x "$dir/etcd" ]]; then
  log "building etcd v$ETCD_VERSION (about 30 s)"
  # etcd's server module carries replace lines, so go install cannot build it
  # directly; a wrapper module requiring it can.
  mkdir -p "$work/etcd"
  (
    cd "$work/etcd"
    go mod init edgeplane.local/etcd >/dev/null 2>&1
    go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >>"$buildlog" 2>&1
    go build -trimpath -ldflags "-s -w" -o "$work/out/etcd" go.etcd.io/etcd/server/v3 >>"$buildlog" 2>&1
  )
  mv "$work/out/etcd" "$dir/etcd"
fi

if [[ ! -x "$dir/kube-apiserver" || ! -x "$dir/kubectl" ]]; then
  log "building kube-apiserver and kubectl v$K8S_VERSION (about 4 min cold)"
  # k8s.io/kubernetes points its k8s.io/* staging modules at ./staging; a
  # wrapper module maps each of them to its published v0.x release instead.
  modfile=$(cd "$work" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  staging_version="v0.${K8S_VERSION#1.}"
  mkdir -p "$work/wrapper"
  (
    cd "$work/wrapper"
    go mod init edgeplane.local/k8s-binaries >/dev/null 2>&1
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$modfile" | while read -r m; do
      go mod edit -replace "$m=$m@$staging_version"
    done
    go get "k8s.io/kubernetes@v$K8S_VERSION" >>"$buildlog" 2>&1
    ldflags="-s -w"
    for kv in "gitVersion=v$K8S_VERSION" "gitMajor=${K8S_VERSION%%.*}" "gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)"; do
      ldflags+=" -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
    done
    go build -trimpath -ldflags "$ldflags" -o "$work/out/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl >>"$buildlog" 2>&1
  )
  mv "$work/out/kube-apiserver" "$work/out/kubectl" "$dir/"
fi

log "binaries ready in $dir"
echo "$dir"
