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

// Command scalepeer is make scale-peer: the same workload on edgeplane (the
// scale run, test/perf/scale) and on plain Kubernetes (kube-controller-manager,
// kube-scheduler and kwok's simulated nodes), on the same kube-apiserver
// and etcd binaries with the same flags, one after the other, in pairs. It
// prints each run's line, after each pair the ratios (compare: ...), and
// at the end every pair again with a summary.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"go.uber.org/zap/zapcore"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/figures"
)

// result is what one run measured, on either side: from the first create
// until every instance (a pod on the peer) ran.
type result struct {
	nodes, instances int
	successS         float64
	// apiserverCPUS is kube-apiserver's CPU over that window, all of it
	// (the rest's share included, as test/perf/scale reports it).
	apiserverCPUS     float64
	cpuMsPerInstance  float64
	writesPerInstance float64 // Leases excluded
	writesWithLeases  float64 // peer only
	restCPUMsPerNodeS float64 // peer only
	line              string
	// stages is kube-apiserver's apiserver_stages: line over the run's
	// convergence; empty when its profile failed.
	stages string
	// ceilingS is when the peer's run was stopped short of every
	// instance, with running instances by then (0: it ran to the end);
	// successS is then projected at its rate, and the figures per
	// instance are per running instance.
	ceilingS float64
	running  int
}

func main() {
	nodes := flag.Int("nodes", 1000, "Nodes; each run places 5 per node of 2 instances (EdgeServices of factor 2, or Deployments of 2 replicas).")
	pairs := flag.Int("pairs", 3, "Pairs of runs, edgeplane's then the peer's.")
	viaHub := flag.Bool("hub", true, "Passed to test/perf/scale: edgeplane's fleet through the edge hub; false: straight to the API server.")
	only := flag.String("only", "both", "both, or one side alone: peer or edgeplane (no compare lines).")
	timeout := flag.Duration("timeout", 40*time.Minute, "Give up on one run after this long.")
	cbor := flag.Bool("cbor", false, "Both sides with kube-apiserver's alpha CBORServingAndStorage gate (KEP-4222: custom resources stored in etcd as CBOR; test/perf/scale --cbor on edgeplane's side).")
	peerWithin := flag.Duration("peer-within", 0, "Stop the peer's run this long after its first create, and give its figures of that time: its time to every instance projected at the rate it reached, the rest per instance running by then; 0 waits until --timeout.")
	bin := flag.String("bin", "bin", "Directory of the manager and edge-agent binaries (make build), for test/perf/scale.")
	out := flag.String("out", "dist/scale-peer", "Directory of each run's logs.")
	figuresPath := flag.String("figures", "", "Write the pairs' figures as a Markdown page here (docs/figures), when both sides ran.")
	flag.Parse()
	if !slices.Contains([]string{"both", "peer", "edgeplane"}, *only) || *nodes <= 0 || *pairs <= 0 {
		fmt.Fprintln(os.Stderr, "scale-peer: --only is both, peer or edgeplane; --nodes and --pairs are positive")
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	// An interrupt ends the run as a failure does: every process it
	// started is stopped on the way out.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Stamped as the run starts: the commit measured, not what the
	// working tree holds by the end.
	stamp := figures.Now(testenv.RepoRoot())
	compared, err := run(ctx, *nodes, *pairs, *viaHub, *cbor, *only, *timeout, *peerWithin, *bin, *out)
	if err == nil && *figuresPath != "" && len(compared) > 0 {
		err = figuresPage(*nodes, *pairs, *cbor, *peerWithin, stamp, compared).Write(*figuresPath)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale-peer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, nodes, pairs int, viaHub, cbor bool, only string, timeout, peerWithin time.Duration, bin, out string) ([][2]result, error) {
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var scale, assets string
	if only != "peer" {
		tmp, err := os.MkdirTemp("", "edgeplane-scalepeer")
		if err != nil {
			return nil, err
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		if scale, err = buildScale(ctx, tmp); err != nil {
			return nil, err
		}
	}
	if only != "edgeplane" {
		if assets, err = peerAssets(); err != nil {
			return nil, err
		}
	}
	var lines []string
	var compared [][2]result
	for k := 1; k <= pairs; k++ {
		var ep, peer result
		if only != "peer" {
			logFile := filepath.Join(out, fmt.Sprintf("edgeplane-%d-pair%d.log", nodes, k))
			fmt.Fprintf(os.Stderr, "pair %d: edgeplane's run (test/perf/scale), its output in %s\n", k, logFile)
			if ep, err = runEdgeplane(ctx, scale, bin, nodes, viaHub, cbor, timeout, logFile); err != nil {
				return nil, fmt.Errorf("pair %d, edgeplane (log %s): %w", k, logFile, err)
			}
			fmt.Println(ep.line)
			lines = append(lines, ep.line)
			if ep.stages != "" {
				fmt.Println(ep.stages)
			}
		}
		if only != "edgeplane" {
			logDir := filepath.Join(out, fmt.Sprintf("peer-%d-pair%d", nodes, k))
			fmt.Fprintf(os.Stderr, "pair %d: the peer's run (plain Kubernetes), its components' logs in %s\n", k, logDir)
			if peer, err = runPeer(ctx, assets, nodes, cbor, timeout, peerWithin, logDir); err != nil {
				return nil, fmt.Errorf("pair %d, peer (logs in %s): %w", k, logDir, err)
			}
			fmt.Println(peer.line)
			lines = append(lines, peer.line)
			if peer.stages != "" {
				fmt.Println(peer.stages)
			}
		}
		if only == "both" {
			line := compareLine(k, ep, peer)
			fmt.Println(line)
			lines = append(lines, line)
			compared = append(compared, [2]result{ep, peer})
		}
	}
	fmt.Println("all pairs:")
	for _, l := range lines {
		fmt.Println("  " + l)
	}
	if len(compared) > 0 {
		fmt.Println(summaryLine(nodes, compared))
	}
	return compared, nil
}

// compareLine is one pair's ratios, edgeplane's figure over the peer's:
// below 1, edgeplane took less.
func compareLine(k int, ep, peer result) string {
	return fmt.Sprintf("compare: pair=%d nodes=%d edgeplane_success_s=%.1f peer_success_s=%.1f time_ratio=%.3f"+
		" edgeplane_apiserver_cpu_ms_per_instance=%.2f peer_apiserver_cpu_ms_per_instance=%.2f cpu_ratio=%.3f"+
		" edgeplane_writes_per_instance=%.2f peer_writes_per_instance=%.2f writes_ratio=%.3f",
		k, ep.nodes, ep.successS, peer.successS, ep.successS/peer.successS,
		ep.cpuMsPerInstance, peer.cpuMsPerInstance, ep.cpuMsPerInstance/peer.cpuMsPerInstance,
		ep.writesPerInstance, peer.writesPerInstance, ep.writesPerInstance/peer.writesPerInstance) + ceilingFields(peer)
}

// ceilingFields says where the peer's run was stopped, if it was.
func ceilingFields(peer result) string {
	if peer.ceilingS == 0 {
		return ""
	}
	return fmt.Sprintf(" peer_ceiling_s=%.1f peer_running=%d", peer.ceilingS, peer.running)
}

// summaryLine gives each ratio's median over the pairs, with its lowest
// and highest.
func summaryLine(nodes int, pairs [][2]result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "summary: pairs=%d nodes=%d", len(pairs), nodes)
	for _, r := range []struct {
		name   string
		figure func(result) float64
	}{
		{"time_ratio", func(r result) float64 { return r.successS }},
		{"cpu_ratio", func(r result) float64 { return r.cpuMsPerInstance }},
		{"writes_ratio", func(r result) float64 { return r.writesPerInstance }},
	} {
		var rs []float64
		for _, p := range pairs {
			rs = append(rs, r.figure(p[0])/r.figure(p[1]))
		}
		slices.Sort(rs)
		fmt.Fprintf(&b, " %s_median=%.3f %s_min=%.3f %s_max=%.3f", r.name, median(rs), r.name, rs[0], r.name, rs[len(rs)-1])
	}
	return b.String()
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
