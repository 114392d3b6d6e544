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

// Command scalecurve is make scale-curve: the scale run (test/perf/scale),
// through the edge hub unless --hub=false, at each of SIZES nodes, services scaled with the nodes (5 per node, 2
// instances each), one run after another. It prints each run's curve line
// as it comes, and writes them as curve.csv and one SVG plot per figure
// against nodes into --out.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/edgeplane/edgeplane/test/framework/figures"
	"github.com/edgeplane/edgeplane/test/framework/plot"
)

// fields are the curve line's keys every point has, in order.
var fields = []string{"nodes", "online_s", "instances", "success_s", "rest_writes_per_s", "apiserver_rss_mib",
	"apiserver_cpu_ms_per_node_s", "manager_rss_mib", "facade_p99_ms", "apiserver_ms_per_change"}

// hubFields are the keys since the edge hub (#41): hub is 1 for a run
// through the hub and 0 for one straight to the API server (the points
// before the hub, which lack them all, are read so); the hub's and the
// join's figures are NaN in direct mode.
var hubFields = []string{"hub", "rest_writes_per_node_min", "apiserver_watches", "hub_rss_mib", "hub_cpu_ms_per_node_s",
	"join_s", "joins_per_s", "writes_per_join"}

// columns are curve.csv's columns.
func columns() []string { return append(slices.Clone(fields), hubFields...) }

// titles name the plotted figures.
var titles = map[string]string{
	"online_s":                    "every node online after the agent starts (s)",
	"success_s":                   "every instance successful after the services are created (s)",
	"rest_writes_per_s":           "API writes per second at rest",
	"apiserver_rss_mib":           "kube-apiserver peak memory (MiB)",
	"apiserver_cpu_ms_per_node_s": "kube-apiserver CPU at rest per node (ms/s)",
	"manager_rss_mib":             "manager peak memory (MiB)",
	"facade_p99_ms":               "facade p99 under the run's load (ms)",
	"apiserver_ms_per_change":     "kube-apiserver CPU per spec change of a 2-instance service (ms)",
	"rest_writes_per_node_min":    "API writes per node per minute at rest",
	"apiserver_watches":           "watches open at kube-apiserver at rest",
	"hub_rss_mib":                 "hub replicas' memory at rest, summed (MiB)",
	"hub_cpu_ms_per_node_s":       "hub replicas' CPU at rest per node (ms/s)",
	"join_s":                      "every node added and joined through the hub (s)",
	"joins_per_s":                 "joins per second",
	"writes_per_join":             "API writes per join",
}

func main() {
	sizes := flag.String("sizes", "250,500,1000,2000,5000", "Node counts, comma-separated.")
	perNode := flag.Int("services-per-node", 5, "Services per node (2 instances each).")
	out := flag.String("out", "dist/scale-curve", "Directory of curve.csv, the plots and each run's log.")
	bin := flag.String("bin", "bin", "Directory of the manager and edge-agent binaries.")
	within := flag.Duration("converge-within", 30*time.Minute, "How long each size may take for every instance; a size the machine cannot converge in that time is a point without success_s (NaN), its other figures kept.")
	viaHub := flag.Bool("hub", true, "Run the fleet through the edge hub (test/perf/scale --hub); false: straight to the API server (direct mode). Points of both modes are kept apart in curve.csv and plotted side by side.")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *sizes, *perNode, *out, *bin, *within, *viaHub); err != nil {
		fmt.Fprintln(os.Stderr, "scale-curve:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, sizes string, perNode int, out, bin string, within time.Duration, viaHub bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	scale := filepath.Join(out, "scale")
	if b, err := exec.Command("go", "build", "-o", scale, "./test/perf/scale").CombinedOutput(); err != nil {
		return fmt.Errorf("building test/perf/scale: %v\n%s", err, b)
	}
	// The points of sizes not run again are kept, so that one size can be
	// measured again on its own.
	points, err := read(filepath.Join(out, "curve.csv"))
	if err != nil {
		return err
	}
	for s := range strings.SplitSeq(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("size %q is not a node count", s)
		}
		logFile := filepath.Join(out, fmt.Sprintf("scale-%d.log", n))
		if viaHub {
			logFile = filepath.Join(out, fmt.Sprintf("scale-hub-%d.log", n))
		}
		start := time.Now()
		line, err := runOne(ctx, scale, bin, n, n*perNode, within, viaHub, logFile)
		if err != nil {
			return fmt.Errorf("%d nodes (log %s): %w", n, logFile, err)
		}
		fmt.Println(line)
		fmt.Fprintf(os.Stderr, "  (%d nodes took %v)\n", n, time.Since(start).Round(time.Second))
		p, err := parse(line)
		if err != nil {
			return err
		}
		points = slices.DeleteFunc(points, func(q map[string]float64) bool { return q["nodes"] == p["nodes"] && q["hub"] == p["hub"] })
		points = append(points, p)
		slices.SortFunc(points, func(a, b map[string]float64) int {
			return cmp.Or(cmp.Compare(a["hub"], b["hub"]), cmp.Compare(a["nodes"], b["nodes"]))
		})
		// Written after every size, so that a run stopped later keeps
		// what it measured.
		if err := write(out, points); err != nil {
			return err
		}
	}
	return nil
}

// runOne runs the scale harness at one size and returns its curve line.
func runOne(ctx context.Context, scale, bin string, nodes, services int, within time.Duration, viaHub bool, logFile string) (string, error) {
	log, err := os.Create(logFile)
	if err != nil {
		return "", err
	}
	defer func() { _ = log.Close() }()
	cmd := exec.CommandContext(ctx, scale, "--nodes", strconv.Itoa(nodes), "--services", strconv.Itoa(services), "--bin", bin, "--timeout", "60m", "--converge-within", within.String(), "--write-cost", "--hub="+strconv.FormatBool(viaHub))
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return "", err
	}
	var line string
	sc := bufio.NewScanner(io.TeeReader(pipe, log))
	for sc.Scan() {
		t := sc.Text()
		prefix, _, ok := figures.ParseLine(t)
		switch {
		case prefix == "curve":
			line = t
		case ok:
			// The run's other figures (join:, online:, rest:, scale:,
			// writecost: ...) go on with it: make scale-curve's page
			// gets a table of each, a row per size.
			fmt.Println(t)
		}
	}
	if err := cmd.Wait(); err != nil {
		return "", err
	}
	if line == "" {
		return "", errors.New("no curve line")
	}
	return line, nil
}

// read reads the points of an earlier curve.csv; none if there is none.
func read(file string) ([]map[string]float64, error) {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	var points []map[string]float64
	for _, row := range rows[1:] {
		p := map[string]float64{}
		for i, k := range rows[0] {
			if i < len(row) {
				if v, err := strconv.ParseFloat(row[i], 64); err == nil {
					p[k] = v
				}
			}
		}
		if !slices.ContainsFunc(fields, func(k string) bool { _, ok := p[k]; return !ok }) {
			points = append(points, withHubFields(p))
		}
	}
	return points, nil
}

// parse reads a curve line into its figures; every field must be there.
func parse(line string) (map[string]float64, error) {
	p := map[string]float64{}
	for kv := range strings.FieldsSeq(strings.TrimPrefix(line, "curve:")) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("curve line %q: %q is not key=value", line, kv)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("curve line %q: %s: %w", line, k, err)
		}
		p[k] = f
	}
	for _, k := range fields {
		if _, ok := p[k]; !ok {
			return nil, fmt.Errorf("curve line %q lacks %s", line, k)
		}
	}
	return withHubFields(p), nil
}

// withHubFields gives a point from before the hub its keys: direct mode,
// none of the hub's figures.
func withHubFields(p map[string]float64) map[string]float64 {
	for _, k := range hubFields {
		if _, ok := p[k]; !ok {
			p[k] = math.NaN()
			if k == "hub" {
				p[k] = 0
			}
		}
	}
	return p
}

// write writes curve.csv and a plot of each figure against nodes.
func write(dir string, points []map[string]float64) error {
	f, err := os.Create(filepath.Join(dir, "curve.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	cols := columns()
	_ = w.Write(cols)
	for _, p := range points {
		row := make([]string, len(cols))
		for i, k := range cols {
			row[i] = strconv.FormatFloat(p[k], 'f', -1, 64)
		}
		_ = w.Write(row)
	}
	w.Flush()
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		return err
	}
	for _, k := range cols[1:] {
		if k == "instances" || k == "hub" {
			continue
		}
		if err := plotFigure(filepath.Join(dir, k+".svg"), k, points); err != nil {
			return err
		}
	}
	return nil
}

// plotFigure plots one figure against nodes, a line per mode (direct,
// through the hub) that has it; a figure no point has is not plotted.
func plotFigure(file, key string, points []map[string]float64) error {
	f := plot.Figure{Title: titles[key], X: "nodes", Y: key}
	for i, mode := range []string{"direct", "hub"} {
		// A size that did not converge has no success_s (NaN): no point.
		s := plot.Series{Name: mode}
		for _, pt := range points {
			if pt["hub"] == float64(i) {
				s.Points = append(s.Points, plot.XY{X: pt["nodes"], Y: pt[key]})
			}
		}
		f.Series = append(f.Series, s)
	}
	_, err := plot.Save(file, f)
	return err
}
