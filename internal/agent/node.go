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

package agent

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// node runs one edge node as parts that each do one job on a goroutine of
// its own, as the kubelet does, so that nothing the engine does (a hung
// call, a slow pull, a stop that takes its full timeout) holds up anything
// else:
//
//   - the lease keeper registers the node and renews its Lease, and makes
//     no runtime call (lease.go);
//   - the prober pings the engine and says whether it answers (health.go);
//   - the container cache follows the engine's containers by its events
//     and relists, as the PLEG does (containers.go);
//   - the dispatch loop reads the desired state (desired.go) and hands
//     each instance to its worker, which creates, pulls through the
//     puller, starts, stops and removes that instance's containers alone
//     (workers.go, puller.go);
//   - the sampler takes the containers' figures (sampler.go);
//   - the reporter alone writes the node's status (report.go).
type node struct {
	Node
	o   Options
	rt  Runtime
	c   client.Client
	log func(msg string, kv ...any)

	// link is the node's link to the API server, shared by the lease
	// keeper (beats, its way onto it) and the reporter; health is its
	// engine's.
	link *link
	// retries are the back-offs of the instances whose last pull, create
	// or start failed.
	retries    *flowcontrol.Backoff
	beats      *writer
	health     *health
	registered atomic.Bool
	info       atomic.Pointer[nodeInfo]
	// infoRead says whether info holds the engine's word since it last
	// came up.
	infoRead atomic.Bool
	// local follows the local address of the node's connection when the
	// node is given no address; nil otherwise.
	local *localAddress

	desired  *desiredState
	cache    *containerCache
	puller   *puller
	workers  *workers
	reporter *reporter
	creds    *credentials
	// metricsFrom spreads the figures of many nodes over the interval.
	metricsFrom time.Time
	// wake makes the dispatch loop look at once: a service changed.
	wake chan struct{}
}

// nodeInfo is what the engine says of the node.
type nodeInfo struct {
	RuntimeInfo
	boot *metav1.Time
}

// want is an instance the node should run: one of an entry of its
// assignment.
type want struct {
	svc  *assigned
	inst edgev1alpha1.AssignedInstance
}

// assigned is a service's entry of the node's assignment as the agent
// keeps it, in memory and in the state file: the entry, the service it
// names, and a version of its content.
type assigned struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Version names the entry's content (entryVersion), so that a worker
	// is woken when its service's configuration changed and not at every
	// write of the assignment.
	Version string `json:"version"`
	edgev1alpha1.AssignedService
}

// key tells two versions of a want apart: the entry's version changes
// with any change of it.
func (w *want) key() string {
	if w == nil {
		return ""
	}
	return w.svc.UID + "/" + w.svc.Version + "/" + strconv.FormatInt(w.inst.Revision, 10)
}

const (
	retryBase = 10 * time.Second
	retryMax  = 5 * time.Minute
	// maxMessage is the CRD's bound on failedMessage.
	maxMessage = 4096
)

func newNode(n Node, o Options, rt Runtime, c client.Client, assignment client.Reader, synced func() bool, start time.Time, i int) *node {
	s := &node{Node: n, o: o, rt: rt, c: c, wake: make(chan struct{}, 1),
		metricsFrom: start.Add(o.MetricsInterval * time.Duration(i%97) / 97)}
	s.log = func(msg string, kv ...any) { o.Log.Info(msg, append([]any{"node", n.Name}, kv...)...) }
	// What the engine says replaces this once it answers.
	s.info.Store(&nodeInfo{RuntimeInfo: RuntimeInfo{Type: n.Type, Arch: n.Arch}})
	s.link = newLink(o.RenewInterval, s.log)
	s.retries = newRetries(o.Clock)
	s.beats = s.link.writer()
	s.health = newHealth(o.RuntimeProbeInterval, s.log)
	s.creds = &credentials{c: c, key: types.NamespacedName{Namespace: o.LeaseNamespace, Name: n.Name}}
	s.desired = newDesiredState(n.Name, assignment, synced, o.StateDir, s.log)
	s.desired.namespace = o.Namespace
	s.puller = newPuller(rt, o.Clock, o.MaxParallelImagePulls, o.ImagePullProgressDeadline)
	s.cache = newContainerCache(s)
	s.workers = newWorkers(s)
	s.reporter = newReporter(s)
	return s
}

// run runs the node's parts until ctx is done.
func (s *node) run(ctx context.Context) {
	s.desired.load(s.o.Clock.Now())
	var wg sync.WaitGroup
	for _, part := range []func(context.Context){s.keepLease, s.probe, s.cache.run, s.reporter.run, s.sample} {
		wg.Go(func() { part(ctx) })
	}
	s.dispatch(ctx)
	wg.Wait()
	s.workers.wait()
}

// dispatch is the node's sync loop: at each tick, and at once when the
// node's services change, it reads the desired state, keeps it in the
// state file, and hands each instance to its worker. It makes no runtime
// call, and reads the API server's objects from the watch cache only.
func (s *node) dispatch(ctx context.Context) {
	wasReady := false
	for {
		desired, authoritative, err := s.desired.get(ctx)
		if err != nil {
			s.log("Reading the node's services failed", "error", err.Error())
		} else {
			if authoritative {
				s.desired.remember(desired, s.o.Clock.Now())
			}
			s.reporter.setDesired(desired)
			// Workers act once the engine answers and its containers are
			// known: before the cache has listed them, a container that
			// exists would look missing and be created twice.
			ready := s.health.ready() && s.cache.listed.Load()
			if ready {
				s.workers.dispatch(ctx, desired, authoritative, !wasReady)
			}
			wasReady = ready
		}
		select {
		case <-ctx.Done():
			return
		case <-s.o.Clock.After(s.o.Tick):
		case <-s.wake:
		}
	}
}

// poke wakes the dispatch loop; a wake already pending is enough.
func (s *node) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// silent says whether the node is scripted silent now (the simulator's).
func (s *node) silent(now time.Time) bool {
	return s.o.Silent != nil && s.o.Silent(s.Name, now)
}

// apiTimeout bounds each call a part makes to the API server: on a link
// that drops packets (or an API server that stopped) a call would wait on
// a dead connection for minutes.
const apiTimeout = 10 * time.Second

func bounded(ctx context.Context, call func(context.Context) error) error {
	return within(ctx, apiTimeout, call)
}

// engineTimeout bounds each engine call but pulls (bounded by progress)
// and stops (by the stop timeout, plus this).
const engineTimeout = time.Minute

// within runs call with a deadline of d.
func within(ctx context.Context, d time.Duration, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return call(ctx)
}

// address is the address the node reports: its own, else the one its
// connection gives it.
func (s *node) address() string {
	return reportedAddress(s.Address, s.local.last())
}

// setInfo keeps what the engine says of the node.
func (s *node) setInfo(info RuntimeInfo) {
	ni := &nodeInfo{RuntimeInfo: info}
	if !info.BootTime.IsZero() {
		ni.boot = ptr.To(metav1.NewTime(info.BootTime.Truncate(time.Second)))
	}
	s.info.Store(ni)
}
