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

func TestMoments(t *testing.T) {
	m := time.Minute
	tests := []struct {
		d, every time.Duration
		want     []time.Duration
	}{
		{60 * m, 20 * m, []time.Duration{15 * m, 30 * m, 45 * m}},
		// A run shorter than the period still meets the fault once, in its middle.
		{8 * m, 20 * m, []time.Duration{4 * m}},
		{10 * m, 5 * m, []time.Duration{10 * m / 3, 20 * m / 3}},
		{10 * m, 0, nil},
	}
	for _, tc := range tests {
		got := Moments(tc.d, tc.every)
		if len(got) != len(tc.want) {
			t.Errorf("Moments(%v, %v) = %v; want %v", tc.d, tc.every, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("Moments(%v, %v) = %v; want %v", tc.d, tc.every, got, tc.want)
				break
			}
		}
	}
}

func TestTimeline(t *testing.T) {
	tl := Timeline(60*time.Minute, map[Fault]time.Duration{FaultPause: 20 * time.Minute, FaultFailover: 5 * time.Minute, FaultCut: 2 * time.Minute})
	count := map[Fault]int{}
	for i, p := range tl {
		count[p.Fault]++
		if i > 0 && p.At < tl[i-1].At {
			t.Fatalf("not in time order at %d: %v", i, tl)
		}
		if p.At <= 0 || p.At >= 60*time.Minute {
			t.Errorf("%s at %v, outside the run", p.Fault, p.At)
		}
	}
	if count[FaultPause] != 3 || count[FaultFailover] != 12 || count[FaultCut] != 30 {
		t.Errorf("an hour has %v; want 3 pauses, 12 failovers, 30 cuts", count)
	}
	if tl := Timeline(time.Hour, map[Fault]time.Duration{FaultCut: 0}); len(tl) != 0 {
		t.Errorf("a fault turned off (0) is planned: %v", tl)
	}
}

// Every long-lived service meets every kind of action it fits, whatever
// the count of services, pauses and failing images only meet rolling
// services, and each turn over the services keeps the plan's mix.
func TestAction(t *testing.T) {
	for _, services := range []int{1, 2, 7, 20, 100} {
		met := map[int]map[Change]bool{}
		for i := range 200 * len(changePlan) {
			c, s := Action(i, services)
			if s == -1 {
				if services != 1 {
					t.Fatalf("%d services: no service for %s", services, c)
				}
				continue
			}
			if (c == ChangePause || c == ChangeBadImage) && !Rolling(s) {
				t.Fatalf("%d services: %s on service %d, which does not roll", services, c, s)
			}
			if met[s] == nil {
				met[s] = map[Change]bool{}
			}
			met[s][c] = true
		}
		for s := range services {
			want := 4 // env, version, scale, rollback
			if Rolling(s) {
				want = 6
			}
			if len(met[s]) != want {
				t.Errorf("%d services: service %d met %v; want %d kinds", services, s, met[s], want)
			}
		}
	}
	kinds := map[Change]int{}
	for i := range 20 * 100 {
		c, _ := Action(i, 100)
		kinds[c]++
	}
	if kinds[ChangeEnv] != 900 || kinds[ChangeRollback] != 200 || kinds[ChangeBadImage] != 100 {
		t.Errorf("20 turns over 100 services made %v; want the plan's mix, 9 edits, 2 rollbacks and 1 failing image in 20", kinds)
	}
}
