#!/usr/bin/env bash
# Prints a directory holding kube-controller-manager, kube-scheduler and
# kwok, with kwok-stages.yaml (kwok's default "fast" stages), for make
# scale-peer: plain Kubernetes beside edgeplane on envtest's kube-apiserver
# and etcd.
#
# Built as hack/envtest-assets.sh builds kube-apiserver: from the Go module
# proxy, at the Kubernetes version of that script (K8S_VERSION overrides
# both), cached outside the repository by version. PEER_ASSETS, when set,
# wins.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The controllers run against the kube-apiserver envtest-assets.sh builds:
# its default version is read from it, so that the two never drift.
envtest_k8s=$(sed -n 's/^K8S_VERSION=\${K8S_VERSION:-\([0-9][0-9.]*\)}$/\1/p' "$here/envtest-assets.sh")
K8S_VERSION=${K8S_VERSION:-$envtest_k8s}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}
CACHE_DIR=${EDGEPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeplane}

if [[ -n "${PEER_ASSETS:-}" ]]; then
  echo "$PEER_ASSETS"
  exit 0
fi
if [[ -z "$K8S_VERSION" ]]; then
  echo "peer-assets: no K8S_VERSION default found in $here/envtest-assets.sh" >&2
  exit 1
fi

dir="$CACHE_DIR/peer/k8s-v$K8S_VERSION-kwok-v$KWOK_VERSION"
ready() {
  [[ -x "$dir/kube-controller-manager" && -x "$dir/kube-scheduler" && -x "$dir/kwok" && -f "$dir/kwok-stages.yaml" ]]
}
if ready; then
  echo "$dir"
  exit 0
fi

log() { echo "peer-assets: $*" >&2; }
mkdir -p "$dir" "$CACHE_DIR/locks"
# Callers side by side: one builds, the others wait for it and find the
# binaries. A build goes to a directory in the cache and is renamed into
# place, so no one runs half a binary.
exec 9>"$CACHE_DIR/locks/peer.lock"
if ! flock -n 9; then
  log "another build of these binaries runs; waiting for it"
  flock 9
fi
if ready; then
  echo "$dir"
  exit 0
fi
work=$(mktemp -d "$CACHE_DIR/peer/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Build output goes to a log that is shown only when a step fails.
buildlog="$work/build.log"
trap 'echo "peer-assets: build failed; log follows" >&2; cat "$buildlog" >&2' ERR
export GOFLAGS=-mod=mod GOWORK=off

if [[ ! -x "$dir/kwok" || ! -f "$dir/kwok-stages.yaml" ]]; then
  log "building kwok v$KWOK_VERSION (about 1.5 min cold)"
  mkdir -p "$work/kwok"
  (
    cd "$work/kwok"
    go mod init edgeplane.local/kwok >/dev/null 2>&1
    go get "sigs.k8s.io/kwok@v$KWOK_VERSION" >>"$buildlog" 2>&1
    go build -trimpath -ldflags "-s -w" -o "$work/out/kwok" sigs.k8s.io/kwok/cmd/kwok >>"$buildlog" 2>&1
    # kwok alone simulates nothing until given Stages; these are the ones
    # kwokctl configures by default (kustomize/stage/fast of the same
    # release): nodes Ready at once with Leases, pods Running at once.
    src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
    sep=""
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
      pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      printf '%s' "$sep"
      cat "$src/kustomize/stage/$f"
      sep=$'---\n'
    done >"$work/out/kwok-stages.yaml"
  )
  mv "$work/out/kwok" "$work/out/kwok-stages.yaml" "$dir/"
fi

if [[ ! -x "$dir/kube-controller-manager" || ! -x "$dir/kube-scheduler" ]]; then
  log "building kube-controller-manager and kube-scheduler v$K8S_VERSION (about 3.5 min cold, 2 with kube-apiserver built)"
  "$here/k8s-build.sh" "$K8S_VERSION" "$work" "$work/out" "$buildlog" kube-controller-manager kube-scheduler
  mv "$work/out/kube-controller-manager" "$work/out/kube-scheduler" "$dir/"
fi

log "binaries ready in $dir"
echo "$dir"
