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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTable(t *testing.T) {
	var s Samples
	for m := range 31 {
		s.Add(float64(m), "hub-a rss", MiB, 100+float64(m)) // 60 MiB an hour from 110: grown
		s.Add(float64(m), "Lease", Objects, 205)
		v := math.NaN()
		if m < 12 {
			v = 40
		}
		s.Add(float64(m), "manager leader goroutines", Goroutines, v) // not read after minute 11
	}
	gs := Judge(s.All(), 10*time.Minute)
	var b strings.Builder
	if err := Table(&b, s.All(), gs, 10); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows:\n%s", b.String())
	}
	for i, want := range [][]string{
		{"hub-a rss", "MiB", "100", "110", "130", "130", "60.0", "54.5", "GROWN"},
		{"Lease", "objects", "205", "205", "205", "205", "0.0", "0.0", "ok"},
		{"manager leader goroutines", "goroutines", "40.0", "40.0", "40.0", "40.0", "too few samples"},
	} {
		for _, cell := range want {
			if !strings.Contains(lines[i+1], cell) {
				t.Errorf("row %q lacks %q", lines[i+1], cell)
			}
		}
	}
}

func TestWriteFigures(t *testing.T) {
	var s Samples
	for m := range 21 {
		s.Add(float64(m), "agent (cut nodes) rss", MiB, 50)
		s.Add(float64(m), "etcd db in use", MiB, math.NaN()) // never read
	}
	dir := t.TempDir()
	if err := WriteFigures(dir, &s, 10); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "agent-cut-nodes-rss.svg"))
	if err != nil || !strings.Contains(string(svg), "fitted after the warm-up") {
		t.Errorf("agent-cut-nodes-rss.svg with its fitted line: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd-db-in-use.svg")); !os.IsNotExist(err) {
		t.Errorf("a series never read got a plot: %v", err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "samples.csv"))
	if err != nil || !strings.HasPrefix(string(csv), "minute,agent (cut nodes) rss (MiB),etcd db in use (MiB)\n0.00,50,\n") {
		t.Errorf("samples.csv: %q, %v", csv, err)
	}
}

func TestWriteFiguresPage(t *testing.T) {
	out, docs := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "hub-a-rss.svg"), []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(docs, "soak.md")
	// A plot of an earlier run that this run has no series for goes.
	if err := os.MkdirAll(filepath.Join(docs, "soak"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "soak", "gone.svg"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Duration: time.Hour, Nodes: 200, Out: out, FiguresPage: page}
	if err := writeFiguresPage(cfg, Result{Duration: time.Hour, Nodes: 220}, "series  unit\n", "facade readers: p99 2ms"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`make soak DURATION=60m NODES=200`, ", "soak: duration_m=60 nodes=220 ", "facade readers: p99 2ms\n", "series  unit\n```", "![hub-a-rss](soak/hub-a-rss.svg)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page lacks %q:\n%s", want, b)
		}
	}
	if _, err := os.Stat(filepath.Join(docs, "soak", "hub-a-rss.svg")); err != nil {
		t.Errorf("the plot is not beside the page: %v", err)
	}
	if _, err := os.Stat(filepath.Join(docs, "soak", "gone.svg")); !os.IsNotExist(err) {
		t.Errorf("an earlier run's plot stayed: %v", err)
	}
}
