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
	"math"
	"strings"
	"testing"
	"time"
)

// line makes samples a minute apart from minute 0 to last: level plus
// perHour/60 a minute, plus the wobble of each minute in turn.
func line(last int, level, perHour float64, wobble ...float64) *Series {
	s := &Series{Name: "s", Unit: MiB}
	for m := 0; m <= last; m++ {
		v := level + perHour/60*float64(m)
		if len(wobble) > 0 {
			v += wobble[m%len(wobble)]
		}
		s.Points = append(s.Points, Point{float64(m), v})
	}
	return s
}

func TestFit(t *testing.T) {
	tests := []struct {
		name             string
		points           []Point
		slope, intercept float64
		n                int
		ok               bool
	}{
		{"a straight line", []Point{{0, 1}, {1, 3}, {2, 5}}, 2, 1, 3, true},
		{"noise around a flat level", []Point{{0, 10}, {1, 12}, {2, 10}, {3, 12}}, 0.4, 10.4, 4, true},
		{"samples not read are left out", []Point{{0, 1}, {1, math.NaN()}, {2, 5}}, 2, 1, 2, true},
		{"one sample says nothing", []Point{{0, 1}, {1, math.NaN()}}, 0, 0, 1, false},
		{"one minute says nothing", []Point{{3, 1}, {3, 2}}, 0, 0, 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, n, ok := Fit(tc.points)
			if ok != tc.ok || n != tc.n || math.Abs(l.Slope-tc.slope) > 1e-9 || math.Abs(l.Intercept-tc.intercept) > 1e-9 {
				t.Errorf("Fit = %+v, %d, %v; want slope %v intercept %v, %d, %v", l, n, ok, tc.slope, tc.intercept, tc.n, tc.ok)
			}
		})
	}
}

func TestGrowthOf(t *testing.T) {
	tol := Tolerance{Relative: 0.20, Floor: 16}
	// A GC sawtooth of ±30 MiB around 300 MiB.
	saw := []float64{-30, -10, 10, 30, 10, -10}
	tests := []struct {
		name          string
		s             *Series
		grown, judged bool
	}{
		{"flat", line(60, 300, 0), false, true},
		{"a sawtooth around a flat level", line(60, 300, 0, saw...), false, true},
		{"a leak of 40 % an hour", line(60, 300, 120), true, true},
		{"a leak of 40 % an hour under the sawtooth", line(60, 300, 120, saw...), true, true},
		{"10 % an hour is within the tolerance", line(60, 300, 30), false, true},
		{"40 % an hour of a small series is under the floor", line(60, 20, 8), false, true},
		{"falling", line(60, 300, -200), false, true},
		// Start-up: a steep climb in the first ten minutes, flat after:
		// the warm-up is left out of the fit.
		{"a climb during the warm-up only", &Series{Name: "s", Unit: MiB, Points: append(line(9, 100, 1200).Points, line(60, 300, 0).Points[10:]...)}, false, true},
		{"too few samples after the warm-up", line(12, 300, 600), false, false},
		{"a series that starts at 0 and grows", line(60, 0, 60), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := GrowthOf(tc.s, 10, tol)
			if g.Grown != tc.grown || g.Judged != tc.judged {
				t.Errorf("GrowthOf = %+v; want grown %v judged %v", g, tc.grown, tc.judged)
			}
		})
	}
	if g := GrowthOf(line(60, 300, 120), 10, tol); math.Abs(g.PerHour-120) > 1e-6 || math.Abs(g.Level-320) > 1e-6 || math.Abs(g.Relative-0.375) > 1e-6 {
		t.Errorf("a leak of 120 MiB/h from 300 MiB: %+v; want 120 per hour from a level of 320 at minute 10", g)
	}
	gs := []Growth{{Series: "a", Grown: true, Judged: true}, {Series: "b", Judged: true}, {Series: "c", Grown: true, Judged: true}, {Series: "d"}}
	if got := Grown(gs); len(got) != 2 || got[0] != "a" || got[1] != "c" {
		t.Errorf("Grown = %v", got)
	}
	if got := Judged(gs); got != 3 {
		t.Errorf("Judged = %d; want 3", got)
	}
}

// A count filling toward its bound after the warm-up is not grown; one
// that goes on past its bound is.
func TestJudgeBounded(t *testing.T) {
	var s Samples
	for m := range 61 {
		count := 579 + float64(m)*67/30 // 579 to 646 in 30 minutes
		s.Add(float64(m), "filling", Objects, math.Min(count, 700))
		s.Add(float64(m), "leaking", Objects, count)
		s.Add(float64(m), "bound", Objects, 700)
		s.Add(float64(m), "low bound", Objects, 600)
	}
	if g := Judge(s.All(), Warmup); !g[0].Grown || !g[1].Grown {
		t.Fatalf("unbounded, both grow past the tolerance: %+v", g[:2])
	}
	s.SetBound("filling", "bound")
	s.SetBound("leaking", "low bound")
	g := Judge(s.All(), Warmup)
	if g[0].Grown || !g[0].Judged || g[0].Bound != "bound" || g[0].Series != "filling" {
		t.Errorf("a count filling toward its bound: %+v; want judged, not grown", g[0])
	}
	if !g[1].Grown {
		t.Errorf("a count going on past its bound: %+v; want grown", g[1])
	}
	if e := Excess(s.All()[1], s.All()[3]); len(e.Points) != 61 || e.Points[0].Value != 0 || e.Points[60].Value != 113 {
		t.Errorf("Excess: %+v; want 0 within the bound, 113 past it at the end", e.Points)
	}
	var b strings.Builder
	if err := Table(&b, s.All(), g, Warmup.Minutes()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ok: within bound") || !strings.Contains(b.String(), "GROWN past low bound") {
		t.Errorf("the table names the bound in its verdicts:\n%s", b.String())
	}
}

// A run of 8 minutes judges no series (the warm-up is longer), and
// compares the facade's p99 over its two halves.
func TestWindowAndWarmup(t *testing.T) {
	var s Samples
	for m := range 9 {
		s.Add(float64(m), "etcd db in use", MiB, 2+2.5*float64(m)) // history not yet compacted
	}
	if g := Judge(s.All(), Warmup); g[0].Judged || g[0].Grown {
		t.Errorf("an 8-minute run judged %+v", g[0])
	}
	for d, want := range map[time.Duration]time.Duration{60 * time.Minute: 10 * time.Minute, 20 * time.Minute: 10 * time.Minute, 8 * time.Minute: 4 * time.Minute} {
		if got := Window(d); got != want {
			t.Errorf("Window(%v) = %v; want %v", d, got, want)
		}
	}
}
