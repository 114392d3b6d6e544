/*
Copyright 2026 The edgeplane Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		want         []string
		err          error
	}{{
		name: "key=value lines, a table per prefix in the order first seen",
		output: "chaos: services=50 changes=1000 kills=6 duplicates=0\n" +
			"edge-chaos: cuts=10 converge_s=12.5\n" +
			"chaos: services=50 changes=1000 kills=7 duplicates=0\n",
		want: []string{
			"## chaos\n\n| services | changes | kills | duplicates |\n| --- | --- | --- | --- |\n" +
				"| 50 | 1000 | 6 | 0 |\n| 50 | 1000 | 7 | 0 |\n",
			"## edge-chaos\n\n| cuts | converge_s |\n| --- | --- |\n| 10 | 12.5 |\n",
		},
	}, {
		name: "a key missing from a later row is an empty cell, a new key a column",
		output: "gateway: nodes=1000 hours=24 reduction=40\n" +
			"gateway: nodes=10000 reduction=NaN detect_max_s=31.0\n",
		want: []string{
			"## gateway\n\n| nodes | hours | reduction | detect_max_s |\n| --- | --- | --- | --- |\n" +
				"| 1000 | 24 | 40 |  |\n| 10000 |  | NaN | 31.0 |\n",
		},
	}, {
		name: "values as printed, lists and pipes kept in their cell",
		output: "writecost: apiserver_ms_per_change=21.50,22.10 median=21.80 note=a|b\n" +
			"hub_kill: nodes=1000 moved=500\n",
		want: []string{
			"## writecost\n\n| apiserver_ms_per_change | median | note |\n| --- | --- | --- |\n| 21.50,22.10 | 21.80 | a\\|b |\n",
			"## hub_kill\n\n| nodes | moved |\n| --- | --- |\n| 1000 | 500 |\n",
		},
	}, {
		name: "benchmarks, a table per package, a column per unit",
		output: "goos: linux\ngoarch: amd64\npkg: github.com/edgeplane/edgeplane/controllers\ncpu: AMD EPYC\n" +
			"BenchmarkConverge-2   \t       3\t         2.500 s/converge\t        14.00 writes/change\n" +
			"--- BENCH: BenchmarkConverge-2\n    converge_bench_test.go:131: run 1: requests the API server served per spec change\n" +
			"BenchmarkReconcileWide/nodes=1000-2 \t 3\t 113.3 ns/op\t 1.000 µs/instance\n" +
			"PASS\nok  \tgithub.com/edgeplane/edgeplane/controllers\t42.1s\n" +
			"goos: linux\npkg: github.com/edgeplane/edgeplane/apiserver\n" +
			"BenchmarkFacade/pageSize=10-2 \t 1000\t 2048 ns/op\n" +
			"ok  \tgithub.com/edgeplane/edgeplane/apiserver\t9.0s\n",
		want: []string{
			"## github.com/edgeplane/edgeplane/controllers\n\n" +
				"| benchmark | iterations | s/converge | writes/change | ns/op | µs/instance |\n| --- | --- | --- | --- | --- | --- |\n" +
				"| BenchmarkConverge-2 | 3 | 2.500 | 14.00 |  |  |\n" +
				"| BenchmarkReconcileWide/nodes=1000-2 | 3 |  |  | 113.3 | 1.000 |\n",
			"## github.com/edgeplane/edgeplane/apiserver\n\n| benchmark | iterations | ns/op |\n| --- | --- | --- |\n" +
				"| BenchmarkFacade/pageSize=10-2 | 1000 | 2048 |\n",
		},
	}, {
		name:   "benchmarks printed before their package's ok line are that package's",
		output: "BenchmarkA-2 \t 3\t 10 ns/op\nok  \texample.com/a\t1.0s\n",
		want:   []string{"## example.com/a\n\n| benchmark | iterations | ns/op |\n| --- | --- | --- |\n| BenchmarkA-2 | 3 | 10 |\n"},
	}, {
		name: "noise among the figures: prose, go test's headers, a test's log",
		output: "edge-chaos: seed 42\n" +
			"kube-apiserver holds 12 watches before any hub replica or node\n" +
			"scale: the audit log holds 3 writes where apiserver_request_total counted 4: its breakdown is incomplete\n" +
			"=== RUN   TestAPIServerOutage\n" +
			"    outage_test.go:159: stopping the API server (pid 42) for 1m0s\n" +
			"    outage_test.go:230: outage: stopped_s=60 reads_ok=590 converge_s=1.2\n" +
			"chaos: round 3: killed manager-1 after 6s\n" +
			"Benchmark results follow\n" +
			"BenchmarkX-2 3 fast ns/op\n" +
			"rest: nodes=1000 window_s=60\r\n" +
			"--- PASS: TestAPIServerOutage (75.20s)\n",
		want: []string{
			"## outage\n\n| stopped_s | reads_ok | converge_s |\n| --- | --- | --- |\n| 60 | 590 | 1.2 |\n",
			"## rest\n\n| nodes | window_s |\n| --- | --- |\n| 1000 | 60 |\n",
		},
	}, {
		name:   "no figure line",
		output: "edge-chaos: seed 42\nPASS\nok  \texample.com/a\t1.0s\n",
		err:    errNoFigures,
	}, {
		name: "nothing printed",
		err:  errNoFigures,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.output)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("sections:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

// parse is the page's sections of a whole output.
func parse(output string) ([]string, error) {
	var f found
	for line := range strings.Lines(output) {
		f.add(strings.TrimRight(line, "\r\n"))
	}
	return f.sections()
}
