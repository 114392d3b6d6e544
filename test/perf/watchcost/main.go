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

// Command watchcost measures what one write costs kube-apiserver when
// many agents watch, two ways: each agent's watch of the EdgeServices
// labelled for its node (today: every service write is matched against
// every such watch) and each agent's watch of one object by name (the
// watch cache hands a write only to the watches of that name). It prints
// one line per size and way:
//
//	watchcost: way= watchers= writes= delivered= apiserver_cpu_ms_per_write=
//
// The figures inform #31's choice of where an agent learns its instances
// (docs/design/0025-one-assignment-per-node.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/names"
	"github.com/edgeplane/edgeplane/internal/test/procs"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

func main() {
	sizes := flag.String("watchers", "250,1000,5000", "Watchers (agents), comma-separated.")
	writes := flag.Int("writes", 300, "Writes timed at each size and way.")
	flag.Parse()
	logf.SetLogger(logr.Discard())
	if err := run(context.Background(), *sizes, *writes); err != nil {
		fmt.Fprintln(os.Stderr, "watchcost:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, sizes string, writes int) error {
	env, cfg, c, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	pid, err := testenv.APIServerPID(cfg)
	if err != nil {
		return err
	}
	// What the writes change: a service placed on two nodes, one node.
	svc := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wide",
		Labels: map[string]string{names.PlacementLabel("node-0"): "", names.PlacementLabel("node-1"): ""}},
		Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1#linux"}}, Nodes: []string{"node-0", "node-1"}}}
	node := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.1:7200", Type: "linux"}}
	for _, o := range []client.Object{svc, node} {
		if err := c.Create(ctx, o); err != nil {
			return err
		}
	}
	for _, s := range strings.Split(sizes, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--watchers %q: %w", s, err)
		}
		for _, way := range []struct {
			name   string
			target client.Object
			want   int // deliveries per write
			watch  func(ctx context.Context, wc client.WithWatch, i int) (watch.Interface, error)
		}{
			{"label", svc, 2, func(ctx context.Context, wc client.WithWatch, i int) (watch.Interface, error) {
				return wc.Watch(ctx, &edgev1alpha1.EdgeServiceList{}, client.InNamespace("default"), client.HasLabels{names.PlacementLabel(fmt.Sprintf("node-%d", i))})
			}},
			{"name", node, 1, func(ctx context.Context, wc client.WithWatch, i int) (watch.Interface, error) {
				return wc.Watch(ctx, &edgev1alpha1.EdgeNodeList{}, client.MatchingFields{"metadata.name": fmt.Sprintf("node-%d", i)})
			}},
		} {
			ms, delivered, err := measure(ctx, cfg, c, pid, w, writes, way.target, way.want, way.watch)
			if err != nil {
				return fmt.Errorf("%s, %d watchers: %w", way.name, w, err)
			}
			fmt.Printf("watchcost: way=%s watchers=%d writes=%d delivered=%d apiserver_cpu_ms_per_write=%.3f\n", way.name, w, writes, delivered, ms)
		}
	}
	return nil
}

// measure opens n watches, makes the writes to target, waits until each
// was delivered want times, and returns kube-apiserver's CPU per write
// beyond its idle rate with the watches open.
func measure(ctx context.Context, cfg *rest.Config, c client.Client, pid, n, writes int, target client.Object, want int,
	open func(context.Context, client.WithWatch, int) (watch.Interface, error)) (float64, int64, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Agents each have their own connection; 50 watches share one here,
	// as HTTP/2 streams, to stay within the process's file limit.
	var clients []client.WithWatch
	for i := 0; i < n; i += 50 {
		wc, err := client.NewWithWatch(rest.CopyConfig(cfg), client.Options{Scheme: testenv.Scheme})
		if err != nil {
			return 0, 0, err
		}
		clients = append(clients, wc)
	}
	var delivered atomic.Int64
	var opened sync.WaitGroup
	var failed atomic.Value
	for i := range n {
		opened.Add(1)
		go func() {
			w, err := open(wctx, clients[i/50], i)
			opened.Done()
			if err != nil {
				failed.Store(err)
				return
			}
			defer w.Stop()
			for e := range w.ResultChan() {
				if e.Type == watch.Modified {
					delivered.Add(1)
				}
			}
		}()
	}
	opened.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return 0, 0, err
	}
	time.Sleep(2 * time.Second) // settle: the watches' initial work
	idle0, err := procs.CPUTime(pid)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	time.Sleep(5 * time.Second)
	idle1, _ := procs.CPUTime(pid)
	idleRate := float64(idle1-idle0) / float64(time.Since(start))

	cpu0, _ := procs.CPUTime(pid)
	start = time.Now()
	for i := range writes {
		patch := client.RawPatch("application/merge-patch+json", []byte(fmt.Sprintf(`{"metadata":{"annotations":{"watchcost":"%d-%d"}}}`, n, i)))
		if err := c.Patch(ctx, target, patch); err != nil {
			return 0, 0, err
		}
	}
	dctx, dcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer dcancel()
	if err := procs.WaitFor(dctx, "every write delivered", 50*time.Millisecond, func() (bool, error) {
		return delivered.Load() >= int64(writes*want), nil
	}); err != nil {
		return 0, 0, err
	}
	took := time.Since(start)
	cpu1, _ := procs.CPUTime(pid)
	busy := float64(cpu1-cpu0) - idleRate*float64(took)
	return busy / float64(writes) / float64(time.Millisecond), delivered.Load(), nil
}
