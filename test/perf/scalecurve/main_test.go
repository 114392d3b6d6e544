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

package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A curve line is read whole or refused, and the points come out as the
// CSV and one SVG plot per figure.
func TestParseAndWrite(t *testing.T) {
	lines := []string{
		"curve: nodes=250 online_s=4.6 instances=2500 success_s=32.7 rest_writes_per_s=25.1 apiserver_rss_mib=655 apiserver_cpu_ms_per_node_s=0.1800 manager_rss_mib=95 facade_p99_ms=8.3 apiserver_ms_per_change=21.5",
		"curve: nodes=500 online_s=6.1 instances=5000 success_s=61.0 rest_writes_per_s=50.3 apiserver_rss_mib=900 apiserver_cpu_ms_per_node_s=0.1700 manager_rss_mib=120 facade_p99_ms=9.0 apiserver_ms_per_change=22.0",
	}
	var points []map[string]float64
	for _, l := range lines {
		p, err := parse(l)
		if err != nil {
			t.Fatal(err)
		}
		points = append(points, p)
	}
	if points[1]["rest_writes_per_s"] != 50.3 || points[0]["nodes"] != 250 {
		t.Errorf("parsed %v", points)
	}
	for _, bad := range []string{"curve: nodes=250", "curve: nodes=x online_s=1", "curve: nodes"} {
		if _, err := parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	dir := t.TempDir()
	if err := write(dir, points); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "curve.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSpace(string(data)), "\n"); len(got) != 3 || got[0] != strings.Join(columns(), ",") || !strings.HasPrefix(got[2], "500,6.1,5000,") {
		t.Errorf("curve.csv:\n%s", data)
	}
	for _, k := range []string{"online_s", "success_s", "rest_writes_per_s", "facade_p99_ms"} {
		svg, err := os.ReadFile(filepath.Join(dir, k+".svg"))
		if err != nil || !strings.Contains(string(svg), "<svg") {
			t.Errorf("%s.svg: %v", k, err)
		}
	}

	// A size that did not converge keeps its other figures, and a later
	// run reads the points back to keep them beside a size run again.
	p, err := parse("curve: nodes=5000 online_s=90.2 instances=50000 success_s=NaN rest_writes_per_s=499.1 apiserver_rss_mib=3000 apiserver_cpu_ms_per_node_s=0.2100 manager_rss_mib=400 facade_p99_ms=20.1 apiserver_ms_per_change=23.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := write(dir, append(points, p)); err != nil {
		t.Fatalf("a NaN success_s: %v", err)
	}
	back, err := read(filepath.Join(dir, "curve.csv"))
	if err != nil || len(back) != 3 || back[2]["online_s"] != 90.2 || back[1]["success_s"] != 61.0 {
		t.Errorf("read back %v, %v", back, err)
	}
	if back[0]["hub"] != 0 || !math.IsNaN(back[0]["hub_rss_mib"]) {
		t.Errorf("a point from before the hub reads as direct mode without the hub's figures: %v", back[0])
	}

	// A point through the hub carries the hub's figures and is kept beside
	// the direct point of its size; the hub's figures get their plots.
	h, err := parse("curve: nodes=500 online_s=7.0 instances=5000 success_s=58.0 rest_writes_per_s=0.2 apiserver_rss_mib=700 apiserver_cpu_ms_per_node_s=0.0100 manager_rss_mib=110 facade_p99_ms=9.1 apiserver_ms_per_change=20.0" +
		" hub=1 rest_writes_per_node_min=0.024 apiserver_watches=60 hub_rss_mib=300 hub_cpu_ms_per_node_s=0.0400 join_s=12.5 joins_per_s=40.0 writes_per_join=5.00")
	if err != nil {
		t.Fatal(err)
	}
	if err := write(dir, append(back, h)); err != nil {
		t.Fatal(err)
	}
	back, err = read(filepath.Join(dir, "curve.csv"))
	if err != nil || len(back) != 4 || back[3]["hub"] != 1 || back[3]["hub_rss_mib"] != 300 || back[1]["hub"] != 0 {
		t.Errorf("read back with a hub point %v, %v", back, err)
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "hub_rss_mib.svg")); err != nil || !strings.Contains(string(svg), "hub") {
		t.Errorf("hub_rss_mib.svg: %v", err)
	}

	if none, err := read(filepath.Join(t.TempDir(), "curve.csv")); none != nil || err != nil {
		t.Errorf("no earlier curve: %v, %v", none, err)
	}
}
