#!/usr/bin/env bash
# make fuzz-long: runs each fuzz target for at least EXECS executions and
# prints its count, as a line to read and as a line of key=value
# (fuzz: target= package= executions=, the table of
# docs/figures/fuzz-long.md). A target that fails prints its log and ends
# the run; its crasher is saved under testdata/fuzz as a seed.
#
#   hack/fuzz-long.sh EXECS PACKAGE:FuzzName...
set -eo pipefail

want=$1
shift
for t in "$@"; do
	log=$(mktemp)
	rc=0; go test -vet=off "./${t%%:*}" -run '^$' -fuzz "^${t#*:}\$" -fuzztime "${want}x" >"$log" 2>&1 || rc=$?
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
	printf '%-22s %-18s %s executions, %s\n' "${t#*:}" "${t%%:*}" "${execs:-?}" "$( [ $rc -eq 0 ] && echo ok || echo FAILED)"
	if [ $rc -ne 0 ]; then cat "$log"; rm -f "$log"; exit 1; fi
	rm -f "$log"
	echo "fuzz: target=${t#*:} package=${t%%:*} executions=${execs:-?}"
done
