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
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// restFigures are what the nodes cost while nothing changes: every node
// online, no service yet.
type restFigures struct {
	nodes int
	// writesPerS are the API server's writes per second (Lease renewals,
	// node status); apiserverCPUPerNode its CPU in ms per node per second.
	writesPerS, apiserverCPUPerNode float64
	apiserverRSS, managerRSS        int64
	etcdBytes                       float64
	// watches are the API server's open watches
	// (apiserver_longrunning_requests{verb="WATCH"}, summed).
	watches float64
	// fleetWatches are those beyond the control plane's before the first
	// node or hub replica: what the fleet adds (the replicas' informers
	// counted in).
	fleetWatches float64
	// Through the hub: the replicas' resident memory summed, and their CPU
	// in ms per node per second; zero in direct mode.
	hubRSS        int64
	hubCPUPerNode float64
	// othersCores is the CPU other processes on the machine used over the
	// window, in cores.
	othersCores float64
}

// hub adds the hub replicas' figures: their memory now, their CPU over
// the window from start to end.
func (f *restFigures) hub(pids map[string]int, names []string, start, end map[string]time.Duration) {
	var cpu time.Duration
	for _, n := range names {
		rss, _ := procs.RSS(pids[n])
		f.hubRSS += rss
		cpu += end[n] - start[n]
	}
	f.hubCPUPerNode = float64(cpu.Microseconds()) / 1000 / idleWindow.Seconds() / float64(f.nodes)
}

// line is the figures at rest as one line of key=value.
func (f restFigures) line() string {
	return fmt.Sprintf("rest: nodes=%d window_s=%.0f rest_writes_per_s=%.2f rest_writes_per_node_min=%.4f apiserver_watches=%.0f fleet_watches=%.0f apiserver_cpu_ms_per_node_s=%.4f apiserver_rss_mib=%d hub_rss_mib=%d hub_cpu_ms_per_node_s=%.4f others_cores=%.2f",
		f.nodes, idleWindow.Seconds(), f.writesPerS, f.writesPerS*60/float64(f.nodes), f.watches, f.fleetWatches, f.apiserverCPUPerNode, f.apiserverRSS>>20, f.hubRSS>>20, f.hubCPUPerNode, f.othersCores)
}

// restCost reads the resting figures: the caller measured the writes and
// the API server's CPU over idleWindow; memory, etcd's size and the open
// watches are read now.
func restCost(ctx context.Context, cfg *rest.Config, env *envtest.Environment, pids map[string]int, nodes int, apiCPU time.Duration, writesPerS float64) restFigures {
	f := restFigures{nodes: nodes, writesPerS: writesPerS,
		apiserverCPUPerNode: float64(apiCPU.Microseconds()) / 1000 / idleWindow.Seconds() / float64(nodes)}
	f.apiserverRSS, _ = procs.RSS(pids["kube-apiserver"])
	f.managerRSS, _ = procs.RSS(pids["manager"])
	f.watches = openWatches(ctx, cfg)
	f.etcdBytes = etcdInUse(ctx, env)
	return f
}

// etcdInUse is the bytes etcd's database has in use.
func etcdInUse(ctx context.Context, env *envtest.Environment) float64 {
	if env.ControlPlane.Etcd == nil || env.ControlPlane.Etcd.URL == nil {
		return 0
	}
	m, _ := testenv.Scrape(ctx, http.DefaultClient, env.ControlPlane.Etcd.URL.String()+"/metrics")
	return sumSeries(m, "etcd_mvcc_db_total_size_in_use_in_bytes", "")
}

func (f restFigures) String() string {
	n := float64(f.nodes)
	return fmt.Sprintf("at rest with %d nodes: %.1f API writes/s (%.2f per node per minute); API server %.4f ms CPU per node per second, %d MiB (%.1f KiB per node); etcd %.1f MiB in use (%.1f KiB per node); manager %d MiB (%.1f KiB per node); %.0f watches open",
		f.nodes, f.writesPerS, f.writesPerS*60/n, f.apiserverCPUPerNode, f.apiserverRSS>>20, float64(f.apiserverRSS)/1024/n,
		f.etcdBytes/(1<<20), f.etcdBytes/1024/n, f.managerRSS>>20, float64(f.managerRSS)/1024/n, f.watches)
}

// sumSeries adds the series whose name starts with prefix and that carry
// label (any when empty).
func sumSeries(m map[string]float64, prefix, label string) float64 {
	total := 0.0
	for k, v := range m {
		if strings.HasPrefix(k, prefix) && (label == "" || strings.Contains(k, label)) {
			total += v
		}
	}
	return total
}

// apiMetrics reads the API server's /metrics; none when it cannot.
func apiMetrics(ctx context.Context, cfg *rest.Config) map[string]float64 {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil
	}
	m, _ := testenv.Scrape(ctx, hc, strings.TrimSuffix(cfg.Host, "/")+"/metrics")
	return m
}

// openWatches reads how many watches the API server holds open.
func openWatches(ctx context.Context, cfg *rest.Config) float64 {
	return sumSeries(apiMetrics(ctx, cfg), "apiserver_longrunning_requests{", `verb="WATCH"`)
}

// settledWatches waits until the API server's open watches stay the same
// for 5 s (the manager's informers started) and returns their number.
func settledWatches(ctx context.Context, cfg *rest.Config) float64 {
	last, since := openWatches(ctx, cfg), time.Now()
	for time.Since(since) < 5*time.Second && ctx.Err() == nil {
		time.Sleep(500 * time.Millisecond)
		if n := openWatches(ctx, cfg); n != last {
			last, since = n, time.Now()
		}
	}
	return last
}

// terminatedWatches reads how many watches the API server has closed
// because they did not take their events in time.
func terminatedWatches(ctx context.Context, cfg *rest.Config) float64 {
	return sumSeries(apiMetrics(ctx, cfg), "apiserver_terminated_watchers_total", "")
}
