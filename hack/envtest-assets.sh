#!/usr/bin/env bash
# Prints a directory holding kube-apiserver, etcd and kubectl for envtest.
#
# The machines that build edgeplane reach only package registries, so the
# binaries setup-envtest would download are built from the Go module proxy
# instead, at pinned versions, and cached outside the repository by version.
# KUBEBUILDER_ASSETS, when set, wins.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

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
  "$here/k8s-build.sh" "$K8S_VERSION" "$work" "$work/out" "$buildlog" kube-apiserver kubectl
  mv "$work/out/kube-apiserver" "$work/out/kubectl" "$dir/"
fi

log "binaries ready in $dir"
echo "$dir"
