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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/test/framework/figures"
)

func TestParseScaleLine(t *testing.T) {
	line := "scale: nodes=1000 instances=10000 success_s=297.5 writes_per_instance=4.66 manager_rss_mib=300 facade_p99_ms=17.6 apiserver_cpu_s=280.5 apiserver_cpu_ms_per_instance=28.05"
	r, err := parseScaleLine(line)
	if err != nil {
		t.Fatal(err)
	}
	if r.nodes != 1000 || r.instances != 10000 || r.successS != 297.5 || r.writesPerInstance != 4.66 || r.apiserverCPUS != 280.5 || r.cpuMsPerInstance != 28.05 || r.line != line {
		t.Errorf("parsed %+v", r)
	}
	// A line without a figure the comparison needs, or with one that is
	// not a number, is an error, not a zero.
	for _, bad := range []string{
		"scale: nodes=1000 instances=10000 success_s=297.5 writes_per_instance=4.66 apiserver_cpu_s=280.5",
		"scale: nodes=1000 instances=10000 success_s=x writes_per_instance=4.66 apiserver_cpu_s=280.5 apiserver_cpu_ms_per_instance=28.05",
		"scale: nodes=1000 instances",
	} {
		if _, err := parseScaleLine(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestRatios(t *testing.T) {
	ep := result{nodes: 1000, successS: 300, cpuMsPerInstance: 28, writesPerInstance: 4.5}
	peer := result{successS: 600, cpuMsPerInstance: 56, writesPerInstance: 9}
	if line := compareLine(1, ep, peer); !strings.Contains(line, " time_ratio=0.500 ") || !strings.Contains(line, " cpu_ratio=0.500 ") || !strings.HasSuffix(line, " writes_ratio=0.500") {
		t.Errorf("compare line %q", line)
	}
	slow := result{successS: 900, cpuMsPerInstance: 28, writesPerInstance: 4.5}
	line := summaryLine(1000, [][2]result{{ep, peer}, {slow, peer}, {ep, slow}})
	for _, want := range []string{"time_ratio_median=0.500 time_ratio_min=0.333 time_ratio_max=1.500", "writes_ratio_median=0.500 writes_ratio_min=0.500 writes_ratio_max=1.000"} {
		if !strings.Contains(line, want) {
			t.Errorf("summary %q lacks %q", line, want)
		}
	}
}

func TestFiguresPage(t *testing.T) {
	ep := result{nodes: 250, successS: 60, cpuMsPerInstance: 20, writesPerInstance: 4}
	peer := result{successS: 50, cpuMsPerInstance: 16, writesPerInstance: 8}
	slow := result{successS: 120, cpuMsPerInstance: 40, writesPerInstance: 4}
	md := figuresPage(250, 3, false, 0, figures.Stamp{Date: "2026-11-27", Commit: "abc1234", Machine: "2 cores"}, [][2]result{{ep, peer}, {slow, peer}, {ep, peer}}).Markdown()
	for _, want := range []string{
		"# edgeplane beside plain Kubernetes, 250 nodes\n",
		"`make scale-peer NODES=250 PAIRS=3`, 2026-11-27, commit abc1234, 2 cores.\n",
		"| 1 | 60.0 s, 50.0 s, 1.20 | 20.00 ms, 16.00 ms, 1.25 | 4.00, 8.00, 0.50 |\n",
		"| 2 | 120.0 s, 50.0 s, 2.40 |",
		"| median ratio | 1.20 | 1.25 | 0.50 |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the page lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "by the stage of the work") {
		t.Errorf("a page of runs without stages has a stages table:\n%s", md)
	}
}

func TestFiguresPageStages(t *testing.T) {
	ep := result{nodes: 250, successS: 60, cpuMsPerInstance: 20, writesPerInstance: 4,
		stages: "apiserver_stages: system=edgeplane cpu_s=100.0 gc_pct=30.0 admission_pct=1.0 managed_fields_pct=8.0 validation_pct=6.0 decode_pct=12.0 encode_pct=10.0 etcd_pct=9.0 watch_pct=8.0 filters_pct=7.0 network_pct=5.0 other_pct=4.0"}
	// A side whose profile failed has no row.
	peer := result{successS: 50, cpuMsPerInstance: 16, writesPerInstance: 8}
	md := figuresPage(250, 1, false, 0, figures.Stamp{Date: "2026-11-27", Commit: "abc1234", Machine: "2 cores"}, [][2]result{{ep, peer}}).Markdown()
	for _, want := range []string{
		"| pair | system | cpu_s | gc_pct | admission_pct | managed_fields_pct | validation_pct | decode_pct | encode_pct | etcd_pct | watch_pct | filters_pct | network_pct | other_pct |",
		"| 1 | edgeplane | 100.0 | 30.0 | 1.0 | 8.0 | 6.0 | 12.0 | 10.0 | 9.0 | 8.0 | 7.0 | 5.0 | 4.0 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the page lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| 1 | kubernetes |") {
		t.Errorf("the side without stages has a row:\n%s", md)
	}
}

// TestPeerResult shows the peer's figures when it ran to the end, and when
// it was stopped at the ceiling: its time projected at the rate it
// reached, the rest per instance running by then, and the page saying so.
func TestPeerResult(t *testing.T) {
	full := peerResult(250, 2500, 2500, 30*time.Second, false, 35*time.Second, 21000, 21750, 0.26)
	if full.successS != 30 || full.cpuMsPerInstance != 14 || full.writesPerInstance != 8.4 || full.ceilingS != 0 || strings.Contains(full.line, "ceiling") {
		t.Errorf("ran to the end: %+v", full)
	}
	stopped := peerResult(2000, 20000, 5000, 600*time.Second, true, 500*time.Second, 40000, 50000, 0.3)
	if stopped.successS != 2400 || stopped.cpuMsPerInstance != 100 || stopped.writesPerInstance != 8 || stopped.ceilingS != 600 || stopped.running != 5000 ||
		!strings.Contains(stopped.line, "ceiling_s=600.0 running=5000 pods_per_s=8.33") {
		t.Errorf("stopped at the ceiling: %+v", stopped)
	}
	if got := peerTime(stopped); got != "2400.0 s projected (stopped at 600 s with 5000 of 20000 instances running)" {
		t.Errorf("peerTime = %q", got)
	}
	if got := compareLine(1, result{nodes: 2000, successS: 600, cpuMsPerInstance: 30, writesPerInstance: 4}, stopped); !strings.HasSuffix(got, " peer_ceiling_s=600.0 peer_running=5000") || !strings.Contains(got, "time_ratio=0.250") {
		t.Errorf("compareLine = %q", got)
	}
}

// TestDelayedStages shows kwok's pod-ready stage given the simulated
// devices' start delay, and the other stages left as they are.
func TestDelayedStages(t *testing.T) {
	assets, dir := t.TempDir(), t.TempDir()
	stages := "apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata:\n  name: node-initialize\nspec:\n  next: {}\n---\n" +
		"apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata:\n  name: pod-ready\nspec:\n  next:\n    statusTemplate: |\n      phase: Running\n"
	if err := os.WriteFile(filepath.Join(assets, "kwok-stages.yaml"), []byte(stages), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := delayedStages(assets, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	docs := strings.Split(string(b), "\n---\n")
	if len(docs) != 2 || strings.Contains(docs[0], "delay") || !strings.Contains(docs[1], "durationMilliseconds: 1000") || !strings.Contains(docs[1], "phase: Running") {
		t.Errorf("stages:\n%s", b)
	}
	if err := os.WriteFile(filepath.Join(assets, "kwok-stages.yaml"), []byte(strings.Split(stages, "---")[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := delayedStages(assets, dir); err == nil {
		t.Error("stages without pod-ready accepted")
	}
}
