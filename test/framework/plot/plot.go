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

// Package plot draws the figures of the long runs (make scale-curve,
// make soak) as SVG line plots, one file per figure.
package plot

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// XY is one point of a line.
type XY struct{ X, Y float64 }

// Series is one line of a plot, named in the legend.
type Series struct {
	Name   string
	Points []XY
	// LineOnly draws the line without a mark at each point: a fitted
	// line beside the samples it was fitted to.
	LineOnly bool
}

// Figure is one plot: its title, axis labels and lines.
type Figure struct {
	Title, X, Y string
	Series      []Series
}

// Save writes the figure to file as SVG, the Y axis from 0. A point
// whose Y is NaN or infinite (not measured) is left out. A series
// keeps the colour of its place in Series even when one before it has no
// points, so that a line means the same in every figure of a run. A
// figure without any point writes nothing and says so (false).
func Save(file string, f Figure) (bool, error) {
	p := plot.New()
	p.Title.Text = f.Title
	p.X.Label.Text = f.X
	p.Y.Label.Text = f.Y
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	plotted := false
	for i, s := range f.Series {
		var xys plotter.XYs
		for _, pt := range s.Points {
			if !math.IsNaN(pt.Y) && !math.IsInf(pt.Y, 0) {
				xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, dots, err := plotter.NewLinePoints(xys)
		if err != nil {
			return false, err
		}
		line.Color = plotutil.Color(i)
		if s.LineOnly {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(line)
			p.Legend.Add(s.Name, line)
		} else {
			dots.Color, dots.Shape = plotutil.Color(i), plotutil.Shape(i)
			p.Add(line, dots)
			p.Legend.Add(s.Name, line, dots)
		}
		plotted = true
	}
	if !plotted {
		return false, nil
	}
	p.Legend.Top, p.Legend.Left = true, true
	return true, p.Save(6*vg.Inch, 4*vg.Inch, file)
}
