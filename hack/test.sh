#!/usr/bin/env bash
# make test after go vet: every test package with the fuzz step beside
# them, then a check that the run left no process and no file behind.
#
# - Packages run TEST_PARALLEL at once; unset, one per core, fewer when
#   memory is short (each suite's kube-apiserver, etcd and engine take
#   about 1.5 GiB at most): the machine decides, not a fixed number.
# - Each test binary runs under hack/testexec (go test -exec): in a process
#   group of its own, everything it starts reaped when it ends, a package
#   that passes but leaves a process running failed.
# - Every process of the run carries EDGEPLANE_TEST_RUN in its
#   environment; at the end, any still alive is named, killed, and the run
#   fails. Interrupted (Ctrl-C, SIGTERM), the run lets the suites and the
#   fuzz step clean up, and runs the same check.
# - TMPDIR is a directory of the run's own; anything left in it at the end
#   is named, removed, and the run fails.
#
# Env: TEST_PARALLEL, SLOW_SUITES (packages to start first), TEST_PACKAGES
# (the three modules' packages: ./... ./hack/... ./test/...), TEST_TIMEOUT
# (go test's -timeout per package, 30m), MAKE, and SKIP_FUZZ=1 to skip the
# fuzz step.
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${EDGEPLANE_CACHE:-$HOME/.cache/edgeplane}
mkdir -p "$cache/bin"
go build -o "$cache/bin/testexec" ./hack/testexec

if [[ -z "${TEST_PARALLEL:-}" ]]; then
	cores=$(nproc)
	mem_gib=$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo)
	TEST_PARALLEL=$((cores < mem_gib * 2 / 3 ? cores : mem_gib * 2 / 3))
	((TEST_PARALLEL >= 1)) || TEST_PARALLEL=1
fi

EDGEPLANE_TEST_RUN="$$.$(date +%s%N)"
export EDGEPLANE_TEST_RUN

# The run's temporary files go into a directory of its own, which must be
# empty at the end: a file a suite leaves behind fails the run as a
# process does. A short name: the engine suites' Podman keeps its state
# under it, and with a longer path it failed, now and then on a busy
# machine, to restart a killed container by its policy.
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/ep.XXXXXX")
export TMPDIR=$run_tmp

# leftovers lists the processes of this run still alive, but for this
# shell and the one listing them.
leftovers() {
	local self=$BASHPID
	for env in /proc/[0-9]*/environ; do
		local pid=${env#/proc/}
		pid=${pid%/environ}
		[[ "$pid" != "$$" && "$pid" != "$self" ]] || continue
		if { tr '\0' '\n' <"$env"; } 2>/dev/null | grep -qx "EDGEPLANE_TEST_RUN=$EDGEPLANE_TEST_RUN"; then
			local state
			state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) || continue
			[[ "$state" != Z ]] || continue
			echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)"
		fi
	done
}

# check_files fails the run when it left anything in its temporary
# directory, and removes the directory.
check_files() {
	local left
	left=$(find "$run_tmp" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort)
	rm -rf "$run_tmp"
	if [[ -z "$left" ]]; then
		echo "files left behind: none"
		return 0
	fi
	echo "files left behind in the run's temporary directory (removed now):"
	echo "$left" | sed 's/^/  /'
	return 1
}

# check fails the run when a process it started is still alive, after
# giving those already exiting a moment; it kills them.
check() {
	local left=""
	for _ in $(seq 1 20); do
		left=$(leftovers)
		[[ -n "$left" ]] || break
		sleep 0.5
	done
	if [[ -z "$left" ]]; then
		echo "processes left behind: none"
		return 0
	fi
	echo "processes left behind by this run (killed now):"
	echo "$left" | sed 's/^/  /'
	echo "$left" | awk '{ print $1 }' | xargs -r kill -9 2>/dev/null || true
	return 1
}

interrupted=""
on_signal() { interrupted=1; }
trap on_signal INT TERM

# The fuzz step runs beside the test packages, at the lowest CPU priority:
# the suites mostly wait (sampled from /proc/stat over a warm run, the 2
# cores were about half idle), and the fuzzer takes only what they leave. Its
# output is shown once the packages are done. setsid: its process group
# is its own, to interrupt as one.
fuzz=""
fuzzlog=$(mktemp "${TMPDIR:-/tmp}/edgeplane-fuzz.XXXXXX")
if [[ -z "${SKIP_FUZZ:-}" ]]; then
	setsid nice -n 19 "${MAKE:-make}" --no-print-directory fuzz >"$fuzzlog" 2>&1 &
	fuzz=$!
fi

rc=0
echo "go test: $TEST_PARALLEL packages at once ($(nproc) cores)"
# In the background and waited for: bash runs a trap only between
# commands, and go test must get to finish while the suites clean up.
# shellcheck disable=SC2086 # the package lists are words
KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)" go test -vet=off -exec "$cache/bin/testexec" \
	-p "$TEST_PARALLEL" -timeout "${TEST_TIMEOUT:-30m}" ${SLOW_SUITES:-} ${TEST_PACKAGES:-./... ./hack/... ./test/...} -count=1 &
gotest=$!
while :; do
	wait "$gotest" && rc=0 || rc=$?
	# wait returns early (over 128) when a signal arrived; go test runs on.
	kill -0 "$gotest" 2>/dev/null || break
	# go test then starts no further package, but passes no signal on: a
	# terminal's Ctrl-C reaches every testexec itself, a signal to this
	# script does not. testexec passes one interrupt to its suite.
	kill -INT "$gotest" 2>/dev/null || true
	pkill -INT -P "$gotest" 2>/dev/null || true
	[[ -z "$fuzz" ]] || kill -TERM -- "-$fuzz" 2>/dev/null || true
done

if [[ -n "$fuzz" ]]; then
	# Failed or interrupted packages end the fuzz step: its figures would
	# not make the run green. SIGTERM, which a background job does not
	# ignore, reaches make's shell loop as well as go test.
	[[ -z "$interrupted" && $rc -eq 0 ]] || kill -TERM -- "-$fuzz" 2>/dev/null || true
	while :; do
		wait "$fuzz" && frc=0 || frc=$?
		kill -0 "$fuzz" 2>/dev/null || break
		kill -TERM -- "-$fuzz" 2>/dev/null || true
	done
	cat "$fuzzlog"
	((rc != 0 || frc == 0)) || rc=$frc
fi
rm -f "$fuzzlog"
check || rc=1
check_files || rc=1
[[ -z "$interrupted" ]] || { echo "make test: interrupted"; exit 130; }
exit "$rc"
