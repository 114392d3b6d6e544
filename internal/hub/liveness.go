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

package hub

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/hub/heartbeat"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
)

// liveness keeps the heartbeats of the nodes connected to this replica in
// memory and writes to the API server only what changes a node's state:
// the node's Lease names this replica when the node starts beating here,
// and is released when it stops for the grace period. The replica's own
// Lease, renewed every renewInterval, is what keeps all its nodes alive.
type liveness struct {
	identity     string // this replica's Lease
	namespace    string // the node Lease namespace
	grace, renew time.Duration
	c            client.Client
	r            client.Reader
	// own renews the replica's own Lease, reading it past the cache, with
	// a rate limit of its own: forwarded reports that fill the hub's
	// client never delay the renewal its nodes' liveness hangs on.
	own             client.Client
	clock           clock.WithTicker
	log             logr.Logger
	metrics         *metrics
	mu              sync.Mutex
	gw              *heartbeat.Gateway
	queue           workqueue.TypedRateLimitingInterface[string]
	staleReplicaAge time.Duration
}

func newLiveness(identity, namespace string, grace, renew time.Duration, c client.Client, r client.Reader, own client.Client, clk clock.WithTicker, log logr.Logger, m *metrics) *liveness {
	return &liveness{
		identity: identity, namespace: namespace, grace: grace, renew: renew, c: c, r: r, own: own, clock: clk, log: log, metrics: m,
		gw: heartbeat.NewGateway(grace),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "hub-transitions", Clock: clk}),
		staleReplicaAge: time.Hour,
	}
}

// beat notes a heartbeat of node. A node that starts beating here has a
// transition to write; so has one whose Lease (in the cache) does not
// name this replica: it moved here and back, or a person edited or
// deleted its Lease.
func (l *liveness) beat(ctx context.Context, node string) time.Time {
	now := l.clock.Now()
	l.mu.Lock()
	came := l.gw.Beat(node, now)
	l.mu.Unlock()
	l.metrics.beats.Inc()
	if came || !l.holds(ctx, node) {
		l.queue.Add(node)
	}
	return now
}

// holds says whether the cached Lease of node names this replica.
func (l *liveness) holds(ctx context.Context, node string) bool {
	lease := &coordinationv1.Lease{}
	err := l.r.Get(ctx, client.ObjectKey{Namespace: l.namespace, Name: node}, lease)
	return err == nil && ptr.Deref(lease.Spec.HolderIdentity, "") == hubapi.HolderPrefix+l.identity
}

// lastBeat is the node's last heartbeat here, while it beats here.
func (l *liveness) lastBeat(node string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gw.Last(node)
}

func (l *liveness) online(node string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gw.Online(node)
}

// connected is how many nodes beat at this replica.
func (l *liveness) connected() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gw.Connected()
}

// transitionWorkers write transitions at once. When a replica dies, its
// share of the fleet moves here within seconds and each moved node's Lease
// is written once: 4 workers wrote 60 a second (about 60 ms a write on a
// busy control plane), too few for 2,500 nodes within the grace period;
// 32 keep up with the client's rate limit.
const transitionWorkers = 32

// run renews the replica's Lease, expires silent nodes and writes the
// transitions until ctx ends; the replica's Lease was made before.
func (l *liveness) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		l.queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for range transitionWorkers {
		wg.Go(func() {
			for l.next(ctx) {
			}
		})
	}
	tick := l.clock.NewTicker(time.Second)
	defer tick.Stop()
	// Start created or renewed the replica's Lease just before.
	nextRenew, nextSweep := l.clock.Now().Add(l.renew), time.Time{}
	for ctx.Err() == nil {
		now := l.clock.Now()
		if !now.Before(nextRenew) {
			if err := l.renewReplica(ctx, now); err != nil {
				l.log.Error(err, "Renewing the hub replica's Lease failed", "lease", l.identity)
				nextRenew = now.Add(time.Second)
			} else {
				nextRenew = now.Add(l.renew)
			}
		}
		if !now.Before(nextSweep) {
			l.sweepReplicas(ctx, now)
			nextSweep = now.Add(l.staleReplicaAge / 4)
		}
		l.mu.Lock()
		off := l.gw.Expire(now)
		l.mu.Unlock()
		for _, n := range off {
			l.queue.Add(n)
		}
		l.metrics.connected.Set(float64(l.connected()))
		select {
		case <-ctx.Done():
		case <-tick.C():
		}
	}
	wg.Wait()
}

func (l *liveness) next(ctx context.Context) bool {
	node, shutdown := l.queue.Get()
	if shutdown {
		return false
	}
	defer l.queue.Done(node)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := l.write(wctx, node, l.online(node))
	cancel()
	if err != nil && ctx.Err() == nil {
		l.log.V(1).Info("Writing a node's transition failed; retrying", "node", node, "error", err.Error())
		l.queue.AddRateLimited(node)
		return true
	}
	l.queue.Forget(node)
	return true
}

// write sets the node's Lease to what the replica knows: held by this
// replica while the node beats here, released when it stopped. It writes
// nothing when the Lease already says so, and never releases a Lease
// another replica holds: the node moved there.
func (l *liveness) write(ctx context.Context, node string, online bool) error {
	holder := hubapi.HolderPrefix + l.identity
	lease := &coordinationv1.Lease{}
	err := l.r.Get(ctx, client.ObjectKey{Namespace: l.namespace, Name: node}, lease)
	if apierrors.IsNotFound(err) {
		if !online {
			return nil
		}
		now := metav1.NewMicroTime(l.clock.Now())
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: l.namespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: ptr.To(int32(l.grace / time.Second)),
				AcquireTime: &now, RenewTime: &now},
		}
		if err = l.c.Create(ctx, lease, fieldOwner); err == nil {
			l.metrics.transitions.WithLabelValues("online").Inc()
		}
		return err
	}
	if err != nil {
		return err
	}
	current := ptr.Deref(lease.Spec.HolderIdentity, "")
	switch {
	case online && current == holder, !online && current != holder:
		return nil
	}
	lease = lease.DeepCopy()
	now := metav1.NewMicroTime(l.clock.Now())
	to := "offline"
	if online {
		lease.Spec.HolderIdentity, lease.Spec.AcquireTime, lease.Spec.RenewTime = &holder, &now, &now
		lease.Spec.LeaseDurationSeconds = ptr.To(int32(l.grace / time.Second))
		lease.Spec.LeaseTransitions = ptr.To(ptr.Deref(lease.Spec.LeaseTransitions, 0) + 1)
		to = "online"
	} else {
		lease.Spec.HolderIdentity = ptr.To("")
	}
	// The resourceVersion read makes this a compare-and-swap: a replica
	// the node moved to meanwhile wins, and this write is tried again
	// against what it wrote.
	if err := l.c.Update(ctx, lease, fieldOwner); err != nil {
		return err
	}
	l.metrics.transitions.WithLabelValues(to).Inc()
	return nil
}

// renewReplica renews the replica's own Lease, creating it first.
func (l *liveness) renewReplica(ctx context.Context, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	t := metav1.NewMicroTime(now)
	lease := &coordinationv1.Lease{}
	err := l.own.Get(ctx, client.ObjectKey{Namespace: l.namespace, Name: l.identity}, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: l.identity, Namespace: l.namespace, Labels: map[string]string{hubapi.LabelHubReplica: "true"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &l.identity, LeaseDurationSeconds: ptr.To(int32(l.grace / time.Second)),
				AcquireTime: &t, RenewTime: &t},
		}
		return l.own.Create(ctx, lease, fieldOwner)
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &t
	return l.own.Update(ctx, lease, fieldOwner)
}

// sweepReplicas deletes the Leases of replicas gone for long: a replica's
// identity is new at every start, so the Leases of old ones would pile
// up. A node whose Lease still names one is offline either way.
func (l *liveness) sweepReplicas(ctx context.Context, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list := &coordinationv1.LeaseList{}
	if err := l.r.List(ctx, list, client.InNamespace(l.namespace), client.HasLabels{hubapi.LabelHubReplica}); err != nil {
		return
	}
	for i := range list.Items {
		lease := &list.Items[i]
		renewed := lease.CreationTimestamp.Time
		if lease.Spec.RenewTime != nil {
			renewed = lease.Spec.RenewTime.Time
		}
		if lease.Name == l.identity || now.Sub(renewed) < l.staleReplicaAge {
			continue
		}
		err := l.c.Delete(ctx, lease, client.Preconditions{ResourceVersion: &lease.ResourceVersion})
		if err == nil {
			l.log.Info("Deleted the Lease of a hub replica gone for long", "lease", lease.Name, "renewed", renewed)
		}
	}
}
