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
	"testing"
	"time"
)

// spread is n latencies: most at base, the slowest 2 % at slow, which
// the p99 falls among.
func spread(n int, base, slow time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = base
		if i%50 == 49 {
			out[i] = slow
		}
	}
	return out
}

func TestP99(t *testing.T) {
	d := make([]time.Duration, 1000)
	for i := range d {
		d[i] = time.Duration(1000-i) * time.Millisecond // unsorted
	}
	if got, ok := P99(d); !ok || got != 990*time.Millisecond {
		t.Errorf("P99 of 1..1000 ms = %v, %v; want 990ms", got, ok)
	}
	if _, ok := P99(d[:minLatencies-1]); ok {
		t.Errorf("a p99 of %d answers", minLatencies-1)
	}
}

func TestCompareP99(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name            string
		first, last     []time.Duration
		worse, measured bool
	}{
		{"unchanged", spread(1000, 2*ms, 8*ms), spread(1000, 2*ms, 8*ms), false, true},
		{"slower but within twice", spread(1000, 2*ms, 10*ms), spread(1000, 2*ms, 19*ms), false, true},
		{"more than twice as slow", spread(1000, 2*ms, 10*ms), spread(1000, 2*ms, 21*ms), true, true},
		{"faster", spread(1000, 2*ms, 40*ms), spread(1000, 2*ms, 10*ms), false, true},
		{"twice a tiny p99 is within the floor", spread(1000, ms, 2*ms), spread(1000, ms, 6*ms), false, true},
		{"a last window the facade hardly answered", spread(1000, 2*ms, 8*ms), spread(50, 2*ms, 8*ms), true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := CompareP99(tc.first, tc.last)
			if v.Worse != tc.worse || v.Measured != tc.measured {
				t.Errorf("CompareP99 = %+v; want worse %v measured %v", v, tc.worse, tc.measured)
			}
		})
	}
}

func TestLatenciesBetween(t *testing.T) {
	var l Latencies
	l.Add(time.Minute, 3*time.Millisecond, true)
	l.Add(2*time.Minute, 5*time.Millisecond, true)
	l.Add(2*time.Minute, time.Millisecond, false)
	l.Add(12*time.Minute, 7*time.Millisecond, true)
	if got := l.Between(0, 10*time.Minute); len(got) != 2 || got[1] != 5*time.Millisecond {
		t.Errorf("the first ten minutes: %v", got)
	}
	if got := l.Between(10*time.Minute, 20*time.Minute); len(got) != 1 || got[0] != 7*time.Millisecond {
		t.Errorf("the next ten: %v", got)
	}
	if ok, failed := l.Counts(); ok != 3 || failed != 1 {
		t.Errorf("counts %d answered, %d failed; want 3 and 1", ok, failed)
	}
}
