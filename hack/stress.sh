#!/usr/bin/env bash
# Runs one package's tests N times in a row with one core kept busy, to
# hunt a flake (the idea of golang.org/x/tools/cmd/stress):
#   hack/stress.sh PKG N [RUN]
# The test binary is built once; each run goes through hack/testexec, as
# in make test, so a run that leaves a process behind fails too. A failed
# run's output is kept in LOGS (a new folder under TMPDIR); last line:
#   stress: package= runs= passed= failed= logs=
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=${1:-}
n=${2:-5}
run=${3:-}
[[ -n "$pkg" && "$n" -gt 0 ]] || { echo "usage: make stress PKG=./path/to/package [N=5] [RUN=regexp]" >&2; exit 2; }

cache=${EDGEPLANE_CACHE:-$HOME/.cache/edgeplane}
mkdir -p "$cache/bin"
go build -o "$cache/bin/testexec" ./hack/testexec
logs=$(mktemp -d "${TMPDIR:-/tmp}/edgeplane-stress.XXXXXX")
go test -c -o "$logs/pkg.test" "$pkg"
[[ -x "$logs/pkg.test" ]] || { echo "stress: $pkg has no tests" >&2; exit 2; }

bash -c 'while :; do :; done' &
busy=$!
trap 'kill "$busy" 2>/dev/null || true' EXIT

assets=$(hack/envtest-assets.sh)
passed=0
failed=0
args=(-test.count=1 -test.timeout=30m)
[[ -z "$run" ]] || args+=("-test.run=$run")
for i in $(seq 1 "$n"); do
	start=$(date +%s)
	# go test runs a test binary in its package's folder.
	if (cd "$pkg" && KUBEBUILDER_ASSETS="$assets" "$cache/bin/testexec" "$logs/pkg.test" "${args[@]}") >"$logs/run-$i.log" 2>&1; then
		passed=$((passed + 1))
		echo "run $i: ok ($(($(date +%s) - start)) s)"
		rm -f "$logs/run-$i.log"
	else
		failed=$((failed + 1))
		echo "run $i: FAIL ($(($(date +%s) - start)) s), output in $logs/run-$i.log"
	fi
done
rm -f "$logs/pkg.test"
echo "stress: package=$pkg runs=$n passed=$passed failed=$failed logs=$logs"
[[ $failed -eq 0 ]]
