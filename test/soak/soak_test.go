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

package soak

import (
	"strings"
	"testing"
	"time"
)

// The run fails, and the command exits non-zero, on each of the issue's
// criteria, and on nothing it only reports.
func TestResultFailed(t *testing.T) {
	ok := Result{Duration: time.Hour, Nodes: 220, P99: P99Verdict{First: 3 * time.Millisecond, Last: 4 * time.Millisecond, Measured: true}}
	tests := []struct {
		name   string
		change func(*Result)
		failed bool
	}{
		{"nothing found", func(*Result) {}, false},
		{"only what is reported", func(r *Result) { r.Offline, r.ChurnErrors, r.FacadeFail, r.ManagerExits = 3, 5, 40, 2 }, false},
		{"a series grown", func(r *Result) { r.Grown = []string{"hub-a rss"} }, true},
		{"a version missing", func(r *Result) { r.Missing = 1 }, true},
		{"a version recorded twice", func(r *Result) { r.Duplicates = 1 }, true},
		{"a service over its history limit", func(r *Result) { r.OverLimit = 1 }, true},
		{"a service not settled", func(r *Result) { r.Unconverged = 1 }, true},
		{"the facade slower at the end", func(r *Result) { r.P99.Worse = true }, true},
		{"the real node ran", func(r *Result) { r.RealNode, r.RealChanges = true, 30 }, false},
		{"the real engine's containers not its instances", func(r *Result) { r.RealNode, r.RealMismatches = true, 1 }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.change(&r)
			if got := r.Failed(); got != tc.failed {
				t.Errorf("Failed() = %v; want %v", got, tc.failed)
			}
		})
	}
}

func TestResultLine(t *testing.T) {
	r := Result{Duration: time.Hour, Nodes: 220, Changes: 3600, Failovers: 12, Missing: 0, Duplicates: 1,
		P99: P99Verdict{First: 3200 * time.Microsecond, Last: 4100 * time.Microsecond, Measured: true}}
	line := r.Line()
	for _, want := range []string{"soak: duration_m=60 nodes=220 changes=3600 failovers=12 ", " missing=0 duplicates=1 ", " p99_first_ms=3.2 p99_last_ms=4.1 judged=0 "} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	if !strings.HasSuffix(line, " grown=none real_node=0 real_mismatches=0") {
		t.Errorf("%q: grown= is before the real node's fields, none when nothing grew", line)
	}
	r.Grown = []string{"hub-a rss", "Event"}
	if !strings.Contains(r.Line(), " grown=hub-a-rss,Event ") {
		t.Errorf("%q: the grown series as their plots are named, comma-separated", r.Line())
	}
	r.RealNode, r.RealMismatches = true, 2
	if !strings.HasSuffix(r.Line(), " real_node=1 real_mismatches=2") {
		t.Errorf("%q: the real node's fields are last", r.Line())
	}
	r.P99.Measured = false
	if !strings.Contains(r.Line(), "p99_first_ms=NaN p99_last_ms=NaN") {
		t.Errorf("%q: an unmeasured p99 reads as such", r.Line())
	}
}
