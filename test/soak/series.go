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
	"encoding/csv"
	"io"
	"math"
	"slices"
	"strconv"
)

// Unit is what a series counts; it chooses the series' tolerance.
type Unit string

// The units of the sampled series.
const (
	MiB        Unit = "MiB"
	Goroutines Unit = "goroutines"
	FDs        Unit = "fds"
	Objects    Unit = "objects"
)

// Point is one sample: minutes since the churn began, and the value, NaN
// when it could not be read (a process being replaced, the API server
// paused).
type Point struct{ Minute, Value float64 }

// Series is one figure sampled through the run, such as the hub's
// resident memory or the count of DeployRecords.
type Series struct {
	Name   string
	Unit   Unit
	Points []Point
	// Bound names the series that bounds this one, if any: a count that
	// fills toward a limit (records toward the services' history limits)
	// is judged by how far it goes past its bound, not by its slope.
	Bound string
}

// Samples are the series of a run in the order first sampled.
type Samples struct {
	order  []string
	byName map[string]*Series
}

// Add appends a sample to the named series, creating it at its first.
func (s *Samples) Add(minute float64, name string, unit Unit, v float64) {
	if s.byName == nil {
		s.byName = map[string]*Series{}
	}
	se := s.byName[name]
	if se == nil {
		se = &Series{Name: name, Unit: unit}
		s.byName[name] = se
		s.order = append(s.order, name)
	}
	se.Points = append(se.Points, Point{minute, v})
}

// SetBound makes series bound the bound of series name (see Series.Bound).
func (s *Samples) SetBound(name, bound string) {
	if se := s.byName[name]; se != nil {
		se.Bound = bound
	}
}

// All are the series in the order first sampled.
func (s *Samples) All() []*Series {
	out := make([]*Series, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, s.byName[n])
	}
	return out
}

// WriteCSV writes one row per sampled minute and one column per series
// ("minute", then each series as "name (unit)"); a series not sampled
// or not read at a minute leaves its cell empty.
func (s *Samples) WriteCSV(w io.Writer) error {
	var minutes []float64
	cells := map[float64]map[string]float64{}
	for _, se := range s.All() {
		for _, p := range se.Points {
			if cells[p.Minute] == nil {
				cells[p.Minute] = map[string]float64{}
				minutes = append(minutes, p.Minute)
			}
			cells[p.Minute][se.Name] = p.Value
		}
	}
	slices.Sort(minutes)
	cw := csv.NewWriter(w)
	head := []string{"minute"}
	for _, se := range s.All() {
		head = append(head, se.Name+" ("+string(se.Unit)+")")
	}
	_ = cw.Write(head)
	for _, m := range minutes {
		row := []string{strconv.FormatFloat(m, 'f', 2, 64)}
		for _, se := range s.All() {
			v, ok := cells[m][se.Name]
			if !ok || math.IsNaN(v) {
				row = append(row, "")
				continue
			}
			row = append(row, strconv.FormatFloat(v, 'f', -1, 64))
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
