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

// Package agent is the reference edge agent: a runtime-agnostic node loop
// over a Runtime (a real container engine, or the simulator). For each node
// it registers the EdgeNode, renews its Lease, runs the instances its
// NodeAssignment places on it and reports into EdgeNode status (its own
// fields only, by server-side apply) the containers the runtime shows. With
// the simulator one process can play many nodes, as kwok does for kubelets.
package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/scheme"
	"github.com/edgeplane/edgeplane/internal/shared/version"
)

// FieldOwner is the field manager of every agent's writes.
const FieldOwner = "edge-agent"

// Node is one edge node the agent plays. Address is the address it
// reports (status.nodeInfo.address); empty reports the host its
// connection to the cluster leaves from, with DefaultPort. Type, Arch
// and Labels go into the EdgeNode when the agent creates it.
type Node struct {
	Name, Type, Arch, Address string
	Labels                    map[string]string
}

// Options configure the agent.
type Options struct {
	Nodes []Node
	// Namespace limits the services run to one namespace; empty means all.
	Namespace      string
	LeaseNamespace string
	// LeaseDuration is written into the Lease; RenewInterval is how often
	// it is renewed.
	LeaseDuration, RenewInterval time.Duration
	// NewRuntime returns the runtime of the i-th node: a real engine's,
	// or the simulator's (package sim).
	NewRuntime func(n Node, i int) (Runtime, error)
	// MaxParallelImagePulls bounds the pulls of one node at once; 1 pulls
	// one image at a time, as the kubelet's serializeImagePulls does.
	MaxParallelImagePulls int
	// ImagePullProgressDeadline cuts a pull that makes no progress for
	// this long, as the kubelet's --image-pull-progress-deadline did.
	ImagePullProgressDeadline time.Duration
	// MetricsInterval is how often cpu, memory and size figures are
	// sampled and reported at least; a report of state changes samples
	// figures half an interval old or more, to carry them along.
	MetricsInterval time.Duration
	// FiguresInterval is the least time between two reports that moving
	// figures alone ask for: a fleet's figures move all the time, and a
	// write per node at every sample is what a fleet of thousands cannot
	// pay. A new container's first figures, and reports of state changes,
	// are not held back; the latter take the latest figures along.
	FiguresInterval time.Duration
	// Tick is how often each node looks at its services and at the
	// changes its runtime's event stream announced.
	Tick time.Duration
	// ResyncInterval is how often each node lists its runtime's containers
	// in full, in case the event stream missed a change.
	ResyncInterval time.Duration
	// MinReportInterval is how long a node holds its changes at most,
	// from the first of them, while an instance is between two states, to
	// report them in one apply; a settled node reports them at once. 0
	// reports every change at once. The default, 2 s, reports a container
	// created and then running in one apply instead of two.
	MinReportInterval time.Duration
	// StopTimeout is how long a container may take to exit when it is
	// stopped before the runtime kills it.
	StopTimeout time.Duration
	// AgentVersion is reported in the node's nodeInfo.
	AgentVersion string
	// MaxInstances is how many instances the node holds, reported in its
	// nodeInfo for placement (the node's spec.maxInstances overrides it).
	MaxInstances int
	// StateDir holds each node's state file, <node>.json: its last
	// desired state, to start from while the API server cannot be
	// reached. Empty keeps none.
	StateDir string
	// RuntimeProbeInterval is how often each node pings its engine.
	RuntimeProbeInterval time.Duration

	// NodeConfig, when set, gives each node a connection of its own: a
	// device behind the edge hub holds one identity per node, as a real
	// one does, and reaches only that node's objects with it. Run's cfg
	// is not used then.
	NodeConfig func(Node) (*rest.Config, error)

	// Silent, when set, says whether a node is silent at a moment: no
	// Lease renewals and no reports (the simulator's scripted silences).
	Silent func(node string, now time.Time) bool
	Clock  clock.Clock
	Log    logr.Logger
}

// DefaultMaxParallelImagePulls: an edge device's uplink is its narrowest
// part; two pulls at once keep one large image from holding back every
// other while sharing a slow link between few. The kubelet's default is
// serial (serializeImagePulls) on links far faster than a device's.
const DefaultMaxParallelImagePulls = 2

// DefaultOptions are the agent's defaults.
func DefaultOptions() Options {
	return Options{
		LeaseNamespace: "edgeplane-node-lease", LeaseDuration: 40 * time.Second, RenewInterval: 10 * time.Second,
		MetricsInterval: 10 * time.Second, FiguresInterval: 5 * time.Minute, Tick: 200 * time.Millisecond, ResyncInterval: 10 * time.Second, StopTimeout: 10 * time.Second,
		AgentVersion: "edge-agent/" + version.Version(), RuntimeProbeInterval: 5 * time.Second, MinReportInterval: 2 * time.Second,
		MaxParallelImagePulls: DefaultMaxParallelImagePulls, ImagePullProgressDeadline: time.Minute,
		MaxInstances: edgev1alpha1.DefaultMaxInstances,
	}
}

// Run runs the agent's nodes until ctx is done. It makes no call to the
// API server before the nodes run: each node starts from its state file
// and goes on while the API server cannot be reached.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	if len(o.Nodes) == 0 {
		return fmt.Errorf("no nodes to play")
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.NewRuntime == nil {
		return fmt.Errorf("no runtime: set NewRuntime (a real engine's, or package sim's)")
	}
	d := DefaultOptions()
	if o.RuntimeProbeInterval <= 0 {
		o.RuntimeProbeInterval = d.RuntimeProbeInterval
	}
	if o.MaxInstances <= 0 {
		o.MaxInstances = d.MaxInstances
	}
	if o.MaxParallelImagePulls <= 0 {
		o.MaxParallelImagePulls = d.MaxParallelImagePulls
	}
	if o.ImagePullProgressDeadline <= 0 {
		o.ImagePullProgressDeadline = d.ImagePullProgressDeadline
	}
	// One connection for every node, or one per node: the nodes'
	// assignments reach them through the informers of their connection.
	type conn struct {
		c      client.Client
		cache  cache.Cache
		synced func() bool
		nodes  map[string]*node
		// local follows the connections' local address, for nodes
		// given no address; nil when every node has one.
		local *localAddress
	}
	var conns []*conn
	connect := func(cfg *rest.Config, nodes []Node) (*conn, error) {
		var local *localAddress
		if slices.ContainsFunc(nodes, func(n Node) bool { return n.Address == "" }) {
			local = &localAddress{}
			cfg = local.instrument(cfg)
		}
		mapper := restMapper()
		c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme, Mapper: mapper})
		if err != nil {
			return nil, err
		}
		own, err := cache.New(cfg, cacheOptions(o, nodes, mapper))
		if err != nil {
			return nil, err
		}
		inf, err := own.GetInformer(ctx, &edgev1alpha1.NodeAssignment{})
		if err != nil {
			return nil, err
		}
		k := &conn{c: c, cache: own, synced: inf.HasSynced, nodes: map[string]*node{}, local: local}
		conns = append(conns, k)
		return k, wakeOnChange(inf, k.nodes)
	}
	var shared *conn
	if o.NodeConfig == nil {
		var err error
		if shared, err = connect(cfg, o.Nodes); err != nil {
			return err
		}
	}
	start := o.Clock.Now()
	loops := make([]*node, 0, len(o.Nodes))
	for i, n := range o.Nodes {
		k := shared
		if k == nil {
			ncfg, err := o.NodeConfig(n)
			if err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
			if k, err = connect(ncfg, []Node{n}); err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
		}
		rt, err := o.NewRuntime(n, i)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		loop := newNode(n, o, rt, k.c, k.cache, k.synced, start, i)
		if n.Address == "" {
			loop.local = k.local
			k.local.notify(loop.reporter.changed)
		}
		loops = append(loops, loop)
		k.nodes[n.Name] = loop
	}
	for _, k := range conns {
		go func() { _ = k.cache.Start(ctx) }()
	}
	var wg sync.WaitGroup
	for _, loop := range loops {
		wg.Go(func() { loop.run(ctx) })
	}
	o.Log.Info("Agent running", "nodes", len(o.Nodes))
	wg.Wait()
	return nil
}

// restMapper knows the kinds the agent uses without asking the API server:
// discovery at start would keep an agent from starting while its link is down.
func restMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(edgev1alpha1.GroupVersion.WithKind("NodeAssignment"), meta.RESTScopeRoot)
	m.Add(edgev1alpha1.GroupVersion.WithKind("EdgeNode"), meta.RESTScopeRoot)
	m.Add(coordinationv1.SchemeGroupVersion.WithKind("Lease"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("Secret"), meta.RESTScopeNamespace)
	return m
}

// cacheOptions watches only the node's own assignment, by name, when the
// connection serves one node, as a real agent's does: the API server's watch
// cache hands a write only to the watches of its name, and the agent's
// RBAC names that one object. A simulator of many nodes watches every
// assignment. A watch that fails is retried by the informer with its own
// back-off; the nodes' link logs the outage, so the informer logs a
// failure once a minute at most.
func cacheOptions(o Options, nodes []Node, mapper meta.RESTMapper) cache.Options {
	watchLog := outage{what: "Watch of the node's assignment", log: o.Log.Info}
	var mu sync.Mutex
	opts := cache.Options{Scheme: scheme.Scheme, Mapper: mapper, DefaultTransform: cache.TransformStripManagedFields(),
		DefaultWatchErrorHandler: func(_ context.Context, _ *toolscache.Reflector, err error) {
			mu.Lock()
			defer mu.Unlock()
			watchLog.fail(o.Clock.Now(), err)
		}}
	own := cache.ByObject{}
	if len(nodes) == 1 {
		own.Field = fields.OneTermEqualSelector("metadata.name", nodes[0].Name)
	}
	opts.ByObject = map[client.Object]cache.ByObject{&edgev1alpha1.NodeAssignment{}: own}
	return opts
}

// wakeOnChange wakes a node whenever its assignment changes, so that it
// acts on a change at once rather than at its next tick.
func wakeOnChange(inf cache.Informer, byName map[string]*node) error {
	wake := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if o, ok := obj.(client.Object); ok {
			if n := byName[o.GetName()]; n != nil {
				n.poke()
			}
		}
	}
	_, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    wake,
		UpdateFunc: func(_, obj any) { wake(obj) },
		DeleteFunc: wake,
	})
	return err
}
