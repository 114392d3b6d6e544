#!/usr/bin/env bash
# Times CI as CI runs it: `bash .ci/run` on a fresh clone of HEAD with
# ../shared beside it and CI=true. COLD=1 gives the run empty Go module,
# build and tool caches of its own (every tool built again from the Go
# module proxy); the Debian packages the suites install stay as they are.
# The run's output goes to stderr; its figures, once it passed, to stdout:
#   ci: caches= total_s= vet_s= tests_s= fuzz_s= longest_suite_s= packages=
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$root/../shared" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/edgeplane-ci.XXXXXX")
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/main"
ln -s "$shared" "$work/shared"

env=(CI=true)
caches=warm
if [[ -n "${COLD:-}" ]]; then
	caches=cold
	mkdir -p "$work/cache/mod" "$work/cache/build" "$work/cache/edgeplane"
	env+=(GOMODCACHE="$work/cache/mod" GOCACHE="$work/cache/build" EDGEPLANE_CACHE="$work/cache/edgeplane")
fi

# Each line of the run, stamped with the seconds since its start.
log="$work/ci.log"
start=$(date +%s)
set +e
(cd "$work/main" && env "${env[@]}" bash .ci/run) 2>&1 | while IFS= read -r line; do
	printf '%d %s\n' $(($(date +%s) - start)) "$line" | tee -a "$log" >&2
done
rc=${PIPESTATUS[0]}
set -e
total=$(($(date +%s) - start))
if [[ $rc -ne 0 ]]; then
	echo "ci-time: bash .ci/run failed (exit $rc) after ${total}s" >&2
	exit "$rc"
fi
# The steps of make test: go vet, then the test packages, then the fuzz
# step, each starting at its first line.
awk -v caches="$caches" -v total="$total" '
	/ go test: [0-9]+ packages at once/ && !tests { tests = $1 }
	/ fuzz Fuzz/ && !fuzz { fuzz = $1 }
	$2 == "ok" && !fuzz { packages++; s = $4; sub(/s$/, "", s); if (s + 0 > longest) longest = s + 0 }
	END {
		if (!tests || !fuzz) { print "ci-time: the steps of make test were not found in its output" > "/dev/stderr"; exit 1 }
		printf "ci: caches=%s total_s=%d vet_s=%d tests_s=%d fuzz_s=%d longest_suite_s=%.0f packages=%d\n", caches, total, tests, fuzz - tests, total - fuzz, longest, packages
	}' "$log"
