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
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/edgeplane/edgeplane/test/framework/plot"
)

// Table writes one row per series: its first sample, its first after
// the warm-up, its last and its largest, the fitted growth per hour
// after the warm-up (in the unit and as a share of the line's level;
// of a bounded series, of how far it went past its bound), and the
// verdict.
func Table(w io.Writer, all []*Series, gs []Growth, warmup float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "series\tunit\tfirst\tafter warm-up\tlast\tmax\tfitted /h\tfitted %/h\tverdict\t")
	for i, s := range all {
		first, warm, last, top := math.NaN(), math.NaN(), math.NaN(), math.NaN()
		for _, p := range s.Points {
			if math.IsNaN(p.Value) {
				continue
			}
			if math.IsNaN(first) {
				first = p.Value
			}
			if math.IsNaN(warm) && p.Minute >= warmup {
				warm = p.Value
			}
			last, top = p.Value, nanMax(top, p.Value)
		}
		g := gs[i]
		verdict := "ok"
		switch {
		case g.Grown && g.Bound != "":
			verdict = "GROWN past " + g.Bound
		case g.Grown:
			verdict = "GROWN"
		case !g.Judged:
			verdict = "too few samples"
		case g.Bound != "":
			verdict = "ok: within " + g.Bound
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.Unit, num(first), num(warm), num(last), num(top),
			num(g.PerHour), num(100*g.Relative), verdict)
	}
	return tw.Flush()
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return math.Max(a, b)
}

// num writes a figure with a decimal when it is small, "-" when it was
// not measured.
func num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case math.Abs(v) < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// fileName is a series' name as a file name: "agent (cut nodes) rss" is
// agent-cut-nodes-rss.
func fileName(series string) string {
	return strings.Join(strings.FieldsFunc(series, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	}), "-")
}

// WriteFigures writes samples.csv and one SVG plot per series into dir,
// each with its line fitted after the warm-up when there is one.
func WriteFigures(dir string, samples *Samples, warmup float64) error {
	f, err := os.Create(filepath.Join(dir, "samples.csv"))
	if err != nil {
		return err
	}
	if err := samples.WriteCSV(f); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, s := range samples.All() {
		fig := plot.Figure{Title: s.Name, X: "minutes of churn", Y: string(s.Unit)}
		line := plot.Series{Name: s.Name}
		var after []Point
		for _, p := range s.Points {
			line.Points = append(line.Points, plot.XY{X: p.Minute, Y: p.Value})
			if p.Minute >= warmup {
				after = append(after, p)
			}
		}
		fig.Series = append(fig.Series, line)
		if l, n, ok := Fit(after); ok && n >= minFitted {
			from, to := after[0].Minute, after[len(after)-1].Minute
			fig.Series = append(fig.Series, plot.Series{Name: "fitted after the warm-up", LineOnly: true,
				Points: []plot.XY{{X: from, Y: l.At(from)}, {X: to, Y: l.At(to)}}})
		}
		if _, err := plot.Save(filepath.Join(dir, fileName(s.Name)+".svg"), fig); err != nil {
			return err
		}
	}
	return nil
}
