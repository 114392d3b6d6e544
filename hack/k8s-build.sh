#!/usr/bin/env bash
# k8s-build.sh VERSION WORK OUT LOG CMD... builds k8s.io/kubernetes/cmd/CMD
# at VERSION from the Go module proxy for each CMD into OUT, working in
# WORK, its output appended to LOG: the build envtest-assets.sh and
# peer-assets.sh share.
#
# k8s.io/kubernetes points its k8s.io/* staging modules at ./staging; a
# wrapper module maps each of them to its published v0.x release instead.
set -euo pipefail

version=$1 work=$2 out=$3 log=$4
shift 4
modfile=$(cd "$work" && go mod download -json "k8s.io/kubernetes@v$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
staging_version="v0.${version#1.}"
mkdir -p "$work/wrapper"
cd "$work/wrapper"
go mod init edgeplane.local/k8s-binaries >/dev/null 2>&1
sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$modfile" | while read -r m; do
  go mod edit -replace "$m=$m@$staging_version"
done
go get "k8s.io/kubernetes@v$version" >>"$log" 2>&1
ldflags="-s -w"
for kv in "gitVersion=v$version" "gitMajor=${version%%.*}" "gitMinor=$(echo "$version" | cut -d. -f2)"; do
  ldflags+=" -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done
pkgs=()
for cmd in "$@"; do
  pkgs+=("k8s.io/kubernetes/cmd/$cmd")
done
go build -trimpath -ldflags "$ldflags" -o "$out/" "${pkgs[@]}" >>"$log" 2>&1
