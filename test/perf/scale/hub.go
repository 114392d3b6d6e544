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
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/framework/hubs"
)

// The nodes' Leases' namespace, as the hub's (its CA, the join tokens,
// its info) is hubs.Namespace.
const (
	leaseNamespace = "edgeplane-node-lease"
	// hubGrace is the manager's and the hubs' node grace period (their
	// default): a hub replica's share of the fleet must be written to the
	// other replica within it, or its nodes go offline.
	hubGrace = 40 * time.Second
)

// hubRun is the edge hub's replicas of a run, each a process of its own
// (the manager with only the hub on), behind one loopback balancer that
// every device reaches them through, as through a Service
// (test/framework/hubs), with their metrics on plain HTTP.
type hubRun struct {
	*hubs.Hubs
	names   []string // hub-a, hub-b...: the processes' names in the run's figures
	metrics []string // each replica's plain-HTTP metrics address
	pprofs  []string // each replica's pprof address
	// balancers are the balancer's processes, when it is not in this one
	// (more devices than one process may hold the sockets of).
	balancers map[string]int
	// kernel is the balancer when the kernel balances.
	kernel *kernelBalancer
}

// startHubs runs replicas hub replicas for a fleet of nodes and waits
// until each serves; self is this binary, which balancer processes run.
func startHubs(ctx context.Context, c client.Client, dir, bin, self, kubeconfig string, replicas, nodes int, kernel, balancerApart bool) (*hubRun, error) {
	h := &hubRun{balancers: map[string]int{}}
	var front func([]string) (string, func(), error)
	switch n := balancerProcs(nodes, balancerApart); {
	case kernel:
		front = func(targets []string) (string, func(), error) {
			k, err := startKernelBalancer(ctx, targets)
			if err != nil {
				return "", nil, err
			}
			h.kernel = k
			return k.vip, k.Close, nil
		}
	case n > 0:
		front = balancers(ctx, dir, self, n, h.balancers)
	}
	for i := range replicas {
		addr, err := testenv.FreeAddr()
		if err != nil {
			return nil, err
		}
		pprof, err := testenv.FreeAddr()
		if err != nil {
			return nil, err
		}
		h.metrics, h.pprofs, h.names = append(h.metrics, addr), append(h.pprofs, pprof), append(h.names, "hub-"+string(rune('a'+i)))
	}
	var err error
	h.Hubs, err = hubs.Start(ctx, c, hubs.Options{Bin: filepath.Join(bin, "manager"), Dir: dir, Kubeconfig: kubeconfig, Replicas: replicas, Front: front,
		Args: func(i int) []string {
			return []string{"--metrics-bind-address", h.metrics[i], "--metrics-secure=false", "--pprof-bind-address", h.pprofs[i]}
		}})
	if err != nil {
		return nil, err
	}
	if err := procs.WaitFor(ctx, "every hub replica serving", 200*time.Millisecond, func() (bool, error) {
		for i := range h.Addrs {
			if h.Identity(i) == "" {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		h.Stop()
		return nil, err
	}
	return h, nil
}

// pids adds the replicas' processes to pids.
func (h *hubRun) pids(pids map[string]int) {
	maps.Copy(pids, h.balancers)
	for i, name := range h.names {
		pids[name] = h.Pid(i)
	}
}

// metric sums a series of the replicas' metrics (name as written, labels
// included); replicas that do not answer (killed) count nothing.
func (h *hubRun) metric(ctx context.Context, series string) float64 {
	total := 0.0
	for _, addr := range h.metrics {
		m, err := testenv.Scrape(ctx, http.DefaultClient, "http://"+addr+"/metrics")
		if err == nil {
			total += m[series]
		}
	}
	return total
}

// watches is how many nodes hold their assignment's watch open at the
// replicas.
func (h *hubRun) watches(ctx context.Context) float64 { return h.metric(ctx, "edgeplane_hub_watches") }

// relayed is how many assignment events the replicas wrote to the nodes'
// watches.
func (h *hubRun) relayed(ctx context.Context) int64 {
	return int64(h.metric(ctx, "edgeplane_hub_relay_lag_seconds_count"))
}

// simNode is a node as cmd/edge-agent's nodes() names the simulator's:
// <prefix>-<type>-<NN>, --types and --arches given in turn.
type simNode struct{ name, typ, arch, address string }

// The simulator's --node-prefix, --types and --arches in every run.
const (
	simPrefix = "edge"
	simTypes  = "linux"
	simArches = "amd64,arm64"
)

func simNodes(n int) []simNode {
	types, arches := strings.Split(simTypes, ","), strings.Split(simArches, ",")
	out := make([]simNode, 0, n)
	for i := range n {
		out = append(out, simNode{name: fmt.Sprintf("%s-%s-%02d", simPrefix, types[i%len(types)], i+1), typ: types[i%len(types)], arch: arches[i%len(arches)],
			address: fmt.Sprintf("10.77.%d.%d:7200", i/250, i%250+1)})
	}
	return out
}

// joinFigures are what joining the fleet cost.
type joinFigures struct {
	joins           int
	took            time.Duration
	writesPerJoin   float64
	writesByRequest string
}

func (f joinFigures) String() string {
	return fmt.Sprintf("join: joins=%d join_s=%.1f joins_per_s=%.1f writes_per_join=%.2f", f.joins, f.took.Seconds(), float64(f.joins)/f.took.Seconds(), f.writesPerJoin)
}

// joinFleet adds every node as kubectl edge node add does (the EdgeNode,
// a join token of its own owned by it) and joins it through the hub as
// edge-agent join --run=false --state-dir ids/<node> does, 16 at a time.
// It is timed from the first EdgeNode to the last identity saved, and
// its writes are the API server's mutating requests meanwhile.
func joinFleet(ctx context.Context, cfg *rest.Config, h *hubRun, nodes []simNode, ids string) (joinFigures, error) {
	before, err := testenv.APIRequests(ctx, cfg)
	if err != nil {
		return joinFigures{}, err
	}
	began := time.Now()
	err = testenv.Parallel(len(nodes), func(i int) error {
		n := nodes[i]
		node := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: n.name},
			Spec: edgev1alpha1.EdgeNodeSpec{Type: n.typ, Arch: n.arch, Address: n.address}}
		return h.Join(ctx, node, h.URL, filepath.Join(ids, n.name))
	})
	took := time.Since(began)
	if err != nil {
		return joinFigures{}, err
	}
	after, err := testenv.APIRequests(ctx, cfg)
	if err != nil {
		return joinFigures{}, err
	}
	f := joinFigures{joins: len(nodes), took: took, writesPerJoin: (writes(after) - writes(before)) / float64(len(nodes))}
	for key, n := range after {
		if isWrite(key) && n > before[key] {
			f.writesByRequest += fmt.Sprintf("\n  %-40s %8.0f (%.2f per join)", key, n-before[key], (n-before[key])/float64(len(nodes)))
		}
	}
	return f, nil
}

// killHub kills (SIGKILL) the first replica with every node online and
// reports how long until every node's Lease names the surviving replica,
// and how many nodes the manager declared offline meanwhile: an EdgeNode
// seen offline at any moment from the kill until a grace period after
// the last node moved (or after the kill, if later).
func killHub(ctx context.Context, view cache.Cache, h *hubRun, nodes int) (string, error) {
	if len(h.Addrs) < 2 {
		return "", errors.New("--kill-hub needs two hub replicas")
	}
	survivor := h.Identity(1)
	moved := h.connectedAt(ctx, 0)
	inf, err := view.GetInformer(ctx, &edgev1alpha1.EdgeNode{})
	if err != nil {
		return "", err
	}
	var mu sync.Mutex
	offline := map[string]bool{}
	watching := false
	note := func(obj any) {
		n, ok := obj.(*edgev1alpha1.EdgeNode)
		if !ok || n.Status.Status == edgev1alpha1.NodeOnline {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if watching {
			offline[n.Name] = true
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, obj any) { note(obj) }})
	if err != nil {
		return "", err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	mu.Lock()
	watching = true
	mu.Unlock()
	killed := time.Now()
	if err := h.Kill(0); err != nil {
		return "", err
	}
	// The replica's endpoint leaves the Service, as kube-proxy is told
	// once its Pod is gone; a balancer process passes over it by itself.
	if h.kernel != nil {
		if err := h.kernel.SetTargets(ctx, h.Addrs[1:]); err != nil {
			return "", err
		}
	}
	holder := hubapi.HolderPrefix + survivor
	onSurvivor := 0
	err = procs.WaitFor(ctx, "every node's Lease on the surviving replica", 200*time.Millisecond, func() (bool, error) {
		list := &coordinationv1.LeaseList{}
		if err := view.List(ctx, list, client.InNamespace(leaseNamespace), client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		onSurvivor = 0
		for _, l := range list.Items {
			if ptr.Deref(l.Spec.HolderIdentity, "") == holder {
				onSurvivor++
			}
		}
		return onSurvivor >= nodes || time.Since(killed) > 5*time.Minute, nil
	})
	if err != nil {
		return "", err
	}
	reconnected := time.Since(killed)
	reconnectedS := reconnected.Seconds()
	if onSurvivor < nodes {
		reconnectedS = math.NaN()
	}
	// A node the manager declares offline does so a grace period after its
	// last renewal at the latest: watch that long after both moments.
	time.Sleep(time.Until(killed.Add(max(reconnected, hubGrace) + hubGrace/2)))
	// Then every node online again before the services, so that reports
	// after the kill are what converges them.
	if err := procs.WaitFor(ctx, "every node online after the kill", 500*time.Millisecond, func() (bool, error) {
		list := &edgev1alpha1.EdgeNodeList{}
		if err := view.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		online := 0
		for _, n := range list.Items {
			if n.Status.Status == edgev1alpha1.NodeOnline {
				online++
			}
		}
		return online == nodes, nil
	}); err != nil {
		return "", err
	}
	mu.Lock()
	defer mu.Unlock()
	return fmt.Sprintf("hub_kill: nodes=%d moved=%d on_survivor=%d reconnected_s=%.1f declared_offline=%d survivor_connected=%d",
		nodes, moved, onSurvivor, reconnectedS, len(offline), h.connectedAt(ctx, 1)), nil
}

// connectedAt is how many nodes beat at replica i.
func (h *hubRun) connectedAt(ctx context.Context, i int) int {
	m, err := testenv.Scrape(ctx, http.DefaultClient, "http://"+h.metrics[i]+"/metrics")
	if err != nil {
		return -1
	}
	return int(m["edgeplane_hub_connected_nodes"])
}
