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
	"time"
)

// Line is a fitted straight line: Intercept + Slope × minute.
type Line struct{ Intercept, Slope float64 }

// At is the line's value at a minute.
func (l Line) At(minute float64) float64 { return l.Intercept + l.Slope*minute }

// Fit is the least-squares line through the points that hold a value,
// and how many did; false when they span fewer than two minutes. One
// sample says nothing of a trend: a garbage collection just before or
// after it moves it by tens of percent, a line through fifty of them
// hardly.
func Fit(points []Point) (Line, int, bool) {
	var n, sx, sy float64
	for _, p := range points {
		if !math.IsNaN(p.Value) {
			n, sx, sy = n+1, sx+p.Minute, sy+p.Value
		}
	}
	if n < 2 {
		return Line{}, int(n), false
	}
	mx, my := sx/n, sy/n
	var sxx, sxy float64
	for _, p := range points {
		if !math.IsNaN(p.Value) {
			sxx += (p.Minute - mx) * (p.Minute - mx)
			sxy += (p.Minute - mx) * (p.Value - my)
		}
	}
	if sxx == 0 {
		return Line{}, int(n), false
	}
	slope := sxy / sxx
	return Line{Intercept: my - slope*mx, Slope: slope}, int(n), true
}

// Tolerance is how much a series may grow, by its fitted line over the
// samples after the warm-up, before the run calls it grown: both more
// than Relative of the line's level per hour and more than Floor (in the
// series' unit) per hour.
type Tolerance struct{ Relative, Floor float64 }

// Tolerances by unit (docs/soak.md, "What fails the run").
//
// 20 % of the level per hour: the slope of a line through 50 samples a
// minute apart whose values scatter around a flat level with a standard
// deviation of 10 % (a Go heap between collections, informers relisting,
// a failover's burst) has a standard error of about 6 % per hour, so
// three of them stay under 20 %; a leak
// that slow would need five hours to double, which an hour's run cannot
// tell from noise anyway. The floors keep small series from failing on a
// handful: 16 MiB is what a Go process's RSS moves by when the scavenger
// returns memory or not; 50 goroutines and 20 descriptors are a few
// reconnecting nodes' share; 50 objects an hour is less than one leaked
// per churn action per minute, the slowest leak the churn would make.
var Tolerances = map[Unit]Tolerance{
	MiB:        {Relative: 0.20, Floor: 16},
	Goroutines: {Relative: 0.20, Floor: 50},
	FDs:        {Relative: 0.20, Floor: 20},
	Objects:    {Relative: 0.20, Floor: 50},
}

// minFitted is the fewest samples after the warm-up a verdict needs: a
// line through two or three of them is a guess.
const minFitted = 4

// Growth is what the fitted line says of one series after the warm-up.
type Growth struct {
	Series string
	Unit   Unit
	// Samples is how many samples the line was fitted to; Level its value
	// where the window starts; PerHour its growth per hour in the unit;
	// Relative that growth as a share of Level.
	Samples                  int
	Level, PerHour, Relative float64
	// Grown: beyond the tolerance. Judged is false when too few samples
	// came after the warm-up for a verdict.
	Grown, Judged bool
	// Bound is the series bounding this one: the line, level and growth
	// are then those of how far it went past the bound.
	Bound string
}

// GrowthOf fits the samples of a series from warmup minutes on and
// judges the line against tol.
func GrowthOf(s *Series, warmup float64, tol Tolerance) Growth {
	g := Growth{Series: s.Name, Unit: s.Unit, Level: math.NaN(), PerHour: math.NaN(), Relative: math.NaN()}
	var after []Point
	for _, p := range s.Points {
		if p.Minute >= warmup {
			after = append(after, p)
		}
	}
	line, n, ok := Fit(after)
	g.Samples = n
	if !ok {
		return g
	}
	start := math.Inf(1)
	for _, p := range after {
		if !math.IsNaN(p.Value) {
			start = math.Min(start, p.Minute)
		}
	}
	g.Level, g.PerHour = line.At(start), line.Slope*60
	switch {
	case g.Level > 0:
		g.Relative = g.PerHour / g.Level
	case g.PerHour > 0:
		g.Relative = math.Inf(1)
	default:
		g.Relative = 0
	}
	g.Judged = n >= minFitted
	g.Grown = g.Judged && g.PerHour > tol.Floor && g.Relative > tol.Relative
	return g
}

// Judge judges every series with its unit's tolerance, a bounded one by
// how far it goes past its bound.
func Judge(all []*Series, warmup time.Duration) []Growth {
	byName := make(map[string]*Series, len(all))
	for _, s := range all {
		byName[s.Name] = s
	}
	out := make([]Growth, 0, len(all))
	for _, s := range all {
		judged := s
		if b := byName[s.Bound]; b != nil {
			judged = Excess(s, b)
		}
		g := GrowthOf(judged, warmup.Minutes(), Tolerances[s.Unit])
		g.Series, g.Bound = s.Name, s.Bound
		out = append(out, g)
	}
	return out
}

// Excess is how far s goes past bound at each minute both were read: 0
// while within it. A count filling toward its bound has a slope of its
// own, which says nothing of a leak; one that leaks ends up past it.
func Excess(s, bound *Series) *Series {
	at := make(map[float64]float64, len(bound.Points))
	for _, p := range bound.Points {
		at[p.Minute] = p.Value
	}
	out := &Series{Name: s.Name + " past " + bound.Name, Unit: s.Unit}
	for _, p := range s.Points {
		b, ok := at[p.Minute]
		v := math.NaN()
		if ok && !math.IsNaN(p.Value) && !math.IsNaN(b) {
			v = math.Max(0, p.Value-b)
		}
		out.Points = append(out.Points, Point{p.Minute, v})
	}
	return out
}

// Grown names the series judged grown.
func Grown(gs []Growth) []string {
	var out []string
	for _, g := range gs {
		if g.Grown {
			out = append(out, g.Series)
		}
	}
	return out
}

// Warmup is how long after the churn begins series are left unjudged:
// start-up, the first relists, caches filling, and etcd's history, which
// kube-apiserver compacts every 5 minutes to the revision of the tick
// before, so that it first shrinks 10 minutes in. A run this short or
// shorter judges no series.
const Warmup = 10 * time.Minute

// Window is the length of the first and last windows whose facade p99
// are compared: 10 minutes, or half of a run shorter than 20 minutes.
func Window(d time.Duration) time.Duration { return min(10*time.Minute, d/2) }

// Judged counts the series with a verdict.
func Judged(gs []Growth) int {
	n := 0
	for _, g := range gs {
		if g.Judged {
			n++
		}
	}
	return n
}
