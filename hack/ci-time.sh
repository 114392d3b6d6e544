#!/usr/bin/env bash
# Times CI as CI runs it: `bash .ci/run` on a fresh clone of HEAD with
# ../shared beside it and CI=true, RUNS times in a row (1), each on a clone
# of its own.
#   COLD=1       empty Go module, build and tool caches of the run's own
#                (every tool built again from the Go module proxy); the
#                Debian packages the suites install stay as they are.
#   BUSY=1       one core kept busy by another process the whole time.
#   INTERRUPT=S  the run interrupted S seconds in, as Ctrl-C does (SIGINT
#                to its process group); it passes when it stopped and left
#                no process behind.
# After each run, the processes it started that are still alive are
# counted (left=) and killed; any makes the run fail. The run's output goes
# to stderr; its figures, once every run passed, to stdout, a line a run:
#   ci: run= caches= busy= parallel= total_s= vet_s= tests_s= fuzz_s= longest_suite_s= packages= left=
#   ci: run= caches= busy= interrupted_after_s= stopped_s= left=   (INTERRUPT)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$root/../shared" && pwd)
runs=${RUNS:-1}
caches=warm
[[ -z "${COLD:-}" ]] || caches=cold
busy=0
[[ -z "${BUSY:-}" ]] || busy=1

busy_pid=""
work=""
job=""
# The run is a session of its own, so Ctrl-C on this script does not reach
# it: stopping this script interrupts the run as Ctrl-C would, and waits
# for it, before its clone goes.
cleanup() {
	if [[ -n "$job" ]] && kill -0 "$job" 2>/dev/null; then
		kill -INT -- "-$job" 2>/dev/null || true
		wait "$job" 2>/dev/null || true
	fi
	[[ -z "$busy_pid" ]] || kill "$busy_pid" 2>/dev/null || true
	[[ -z "$work" ]] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [[ $busy == 1 ]]; then
	bash -c 'while :; do :; done' &
	busy_pid=$!
fi

# alive lists the live processes of run $1: those whose environment
# carries its marker, EDGEPLANE_CI_RUN, which every process the run
# starts inherits (engines that detach with setsid too). Nothing else on
# the machine is counted or killed.
alive() {
	local marker="EDGEPLANE_CI_RUN=$1" env pid state
	for env in /proc/[0-9]*/environ; do
		pid=${env#/proc/}
		pid=${pid%/environ}
		{ tr '\0' '\n' <"$env"; } 2>/dev/null | grep -qx "$marker" || continue
		state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) || continue
		[[ "$state" != Z ]] || continue
		echo "$pid"
	done
}

failed=0
lines=()
for run in $(seq 1 "$runs"); do
	work=$(mktemp -d "${TMPDIR:-/tmp}/edgeplane-ci.XXXXXX")
	git clone -q "$root" "$work/main"
	ln -s "$shared" "$work/shared"
	marker="$$.$run.$(date +%s%N)"
	env=(CI=true EDGEPLANE_CI_RUN="$marker")
	if [[ $caches == cold ]]; then
		mkdir -p "$work/cache/mod" "$work/cache/build" "$work/cache/edgeplane"
		env+=(GOMODCACHE="$work/cache/mod" GOCACHE="$work/cache/build" EDGEPLANE_CACHE="$work/cache/edgeplane")
	fi

	# Each line of the run, stamped with the seconds since its start. The
	# run is a process group of its own, as a job in a terminal is.
	log="$work/ci.log"
	start=$(date +%s)
	set +e
	(cd "$work/main" && exec setsid env "${env[@]}" bash .ci/run) > >(while IFS= read -r line; do
		printf '%d %s\n' $(($(date +%s) - start)) "$line" | tee -a "$log" >&2
	done) 2>&1 &
	job=$!
	if [[ -n "${INTERRUPT:-}" ]]; then
		sleep "$INTERRUPT"
		echo "ci-time: interrupting the run (SIGINT to its process group) after ${INTERRUPT}s" >&2
		kill -INT -- "-$job" 2>/dev/null
		sent=$(date +%s)
	fi
	wait "$job"
	rc=$?
	job=""
	set -e
	total=$(($(date +%s) - start))
	sleep 1 # the output's last lines

	# What the run left: processes that were not there before it.
	left=$(alive "$marker")
	nleft=0
	if [[ -n "$left" ]]; then
		nleft=$(echo "$left" | wc -l)
		echo "ci-time: run $run left $nleft processes running (killed now):" >&2
		for p in $left; do ps -o pid=,args= -p "$p" >&2 || true; done
		echo "$left" | xargs -r kill -9 2>/dev/null || true
	fi

	if [[ -n "${INTERRUPT:-}" ]]; then
		stopped=$(($(date +%s) - sent))
		if [[ $rc -eq 0 || $nleft -gt 0 ]]; then
			echo "ci-time: run $run: exit $rc after the interrupt, $nleft processes left" >&2
			failed=1
		fi
		lines+=("ci: run=$run caches=$caches busy=$busy interrupted_after_s=$INTERRUPT stopped_s=$stopped left=$nleft")
	elif [[ $rc -ne 0 || $nleft -gt 0 ]]; then
		echo "ci-time: run $run: bash .ci/run exit $rc after ${total}s, $nleft processes left" >&2
		failed=1
	else
		# The steps of make test: go vet, then the test packages, then what
		# the fuzz step (run beside them, its output after theirs) took
		# after them, each starting at its first line.
		lines+=("$(awk -v run="$run" -v caches="$caches" -v busy="$busy" -v total="$total" -v left="$nleft" '
			/ go test: [0-9]+ packages at once/ && !tests { tests = $1; parallel = $4 }
			/ fuzz Fuzz/ && !fuzz { fuzz = $1 }
			$2 == "ok" && !fuzz { packages++; s = $4; sub(/s$/, "", s); if (s + 0 > longest) longest = s + 0 }
			END {
				if (!tests || !fuzz) { print "ci-time: the steps of make test were not found in its output" > "/dev/stderr"; exit 1 }
				printf "ci: run=%d caches=%s busy=%d parallel=%d total_s=%d vet_s=%d tests_s=%d fuzz_s=%d longest_suite_s=%.0f packages=%d left=%d\n", run, caches, busy, parallel, total, tests, fuzz - tests, total - fuzz, longest, packages, left
			}' "$log")")
	fi
	echo "ci-time: run $run of $runs done: exit $rc in ${total}s" >&2
	rm -rf "$work"
	work=""
	[[ $failed == 0 ]] || exit 1
done
printf '%s\n' "${lines[@]}"
