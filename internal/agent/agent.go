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

// Package agent is the reference edge agent with a simulated runtime. One
// process can play many nodes, as kwok does for kubelets. For each node it
// registers the EdgeNode, renews its Lease, and reports into EdgeNode
// status (its own fields only, by server-side apply) the containers of the
// EdgeService instances placed on the node, as a runtime would run them.
package agent

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/index"
	"github.com/edgeplane/edgeplane/internal/names"
	"github.com/edgeplane/edgeplane/internal/scheme"
)

// FieldOwner is the field manager of every agent's writes.
const FieldOwner = "edge-agent"

// Node is one simulated edge node.
type Node struct {
	Name, Type, Arch, Address string
	Labels                    map[string]string
}

// Silence makes a node go quiet, no Lease renewals and no reports, from
// After (since the agent started) for For.
type Silence struct {
	Node       string
	After, For time.Duration
}

// Options configure the agent.
type Options struct {
	Nodes []Node
	// Namespace limits the EdgeServices watched; empty means all.
	Namespace      string
	LeaseNamespace string
	// LeaseDuration is written into the Lease; RenewInterval is how often
	// it is renewed.
	LeaseDuration, RenewInterval time.Duration
	// StartDelay is how long a container stays created before it runs.
	StartDelay time.Duration
	// MetricsInterval is how often cpu, memory and size figures move and
	// are reported; state changes are reported at once.
	MetricsInterval time.Duration
	// Tick is how often each node looks at its services.
	Tick time.Duration
	// FailImages: containers of images whose ref matches fail to start.
	FailImages *regexp.Regexp
	// CrashImages: containers of images whose ref matches restart at every
	// metrics refresh.
	CrashImages *regexp.Regexp
	Silences    []Silence
	// SystemContainers is how many containers outside any EdgeService each
	// node runs (the runtime's own, say).
	SystemContainers int
	Clock            clock.Clock
	Log              logr.Logger
}

// DefaultOptions are the agent's defaults.
func DefaultOptions() Options {
	return Options{
		LeaseNamespace: "edgeplane-node-lease", LeaseDuration: 40 * time.Second, RenewInterval: 10 * time.Second,
		StartDelay: 2 * time.Second, MetricsInterval: 10 * time.Second, Tick: 200 * time.Millisecond, SystemContainers: 1,
	}
}

// Run runs the agent's nodes until ctx is done.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	if len(o.Nodes) == 0 {
		return fmt.Errorf("no nodes to play")
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	view, err := cache.New(cfg, cacheOptions(o))
	if err != nil {
		return err
	}
	if err := index.RegisterServiceByNode(ctx, view); err != nil {
		return err
	}
	go func() { _ = view.Start(ctx) }()
	if !view.WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	start := o.Clock.Now()
	var wg sync.WaitGroup
	for i, n := range o.Nodes {
		sim := newSimNode(n, o, c, view, start, i)
		wg.Go(func() { sim.run(ctx) })
	}
	o.Log.Info("Agent running", "nodes", len(o.Nodes))
	wg.Wait()
	return nil
}

// cacheOptions watches only the services placed on the agent's node when it
// plays one node, as a real agent does; a simulator of many nodes watches
// every service of the namespace.
func cacheOptions(o Options) cache.Options {
	opts := cache.Options{Scheme: scheme.Scheme, DefaultTransform: cache.TransformStripManagedFields()}
	svc := cache.ByObject{}
	if len(o.Nodes) == 1 {
		req, err := labels.NewRequirement(names.PlacementLabel(o.Nodes[0].Name), selection.Exists, nil)
		if err == nil {
			svc.Label = labels.NewSelector().Add(*req)
		}
	}
	if o.Namespace != "" {
		svc.Namespaces = map[string]cache.Config{o.Namespace: {}}
	}
	opts.ByObject = map[client.Object]cache.ByObject{&edgev1alpha1.EdgeService{}: svc}
	return opts
}
