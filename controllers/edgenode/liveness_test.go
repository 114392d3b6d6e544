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

package edgenode

import (
	"context"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// leaseReader answers a live Lease read with lease, or err.
type leaseReader struct {
	client.Reader
	lease *coordinationv1.Lease
	err   error
}

func (l *leaseReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if l.err != nil {
		return l.err
	}
	l.lease.DeepCopyInto(obj.(*coordinationv1.Lease))
	return nil
}

// A controller cut off from the API server blames no node for renewals it
// could not see: a node goes offline only a grace period after the
// controller got an answer again, and one that renewed meanwhile stays online.
func TestJudgeAfterControllerOutage(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakePassiveClock(t0)
	reader := &leaseReader{}
	r := &Reconciler{Clock: clock, GracePeriod: 40 * time.Second, APIReader: reader}
	lease := func(renewed time.Time) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "edge-01", Namespace: "leases"},
			Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renewed}}}
	}
	online := &edgev1alpha1.EdgeNode{Status: edgev1alpha1.EdgeNodeStatus{Status: edgev1alpha1.NodeOnline}}
	cached := lease(t0)
	reader.lease = cached
	at := func(d time.Duration) { clock.SetTime(t0.Add(d)) }
	judge := func() (edgev1alpha1.NodeState, time.Duration, error) {
		state, _, _, left, err := r.judge(context.Background(), online, cached)
		return state, left, err
	}

	if state, left, err := judge(); err != nil || state != edgev1alpha1.NodeOnline || left != 40*time.Second {
		t.Fatalf("at 0: %s, %s left, %v; want online with the whole grace period", state, left, err)
	}
	// The controller's own link goes at 10 s; at 45 s the node looks
	// expired, but the live read gets no answer: nothing is declared.
	reader.err = errors.New("dial tcp 127.0.0.1:6443: i/o timeout")
	at(45 * time.Second)
	if _, _, err := judge(); err == nil {
		t.Fatal("at 45 s, cut off: a verdict without an answer")
	}
	// The link is back at 70 s; the agent has not renewed yet (its own
	// back-off): the node gets a grace period from now.
	reader.err = nil
	at(70 * time.Second)
	if state, left, err := judge(); err != nil || state != edgev1alpha1.NodeOnline || left != 40*time.Second {
		t.Fatalf("at 70 s, answered again: %s, %s left, %v; want online for the grace period from now", state, left, err)
	}
	// The agent renews at 80 s: seen, and online from then.
	reader.lease, cached = lease(t0.Add(80*time.Second)), lease(t0.Add(80*time.Second))
	at(80 * time.Second)
	if state, left, err := judge(); err != nil || state != edgev1alpha1.NodeOnline || left != 40*time.Second {
		t.Fatalf("at 80 s, renewed: %s, %s left, %v", state, left, err)
	}
	// Then silent: offline a grace period after the last renewal seen,
	// the live read agreeing with the cache.
	at(121 * time.Second)
	if state, _, err := judge(); err != nil || state != edgev1alpha1.NodeOffline {
		t.Fatalf("at 121 s, silent for 41 s: %s, %v; want offline", state, err)
	}

	// Without an outage of the controller's, a silent node goes offline on
	// time, and a cache behind the API server is corrected by the live read.
	r2 := &Reconciler{Clock: clock, GracePeriod: 40 * time.Second, APIReader: &leaseReader{lease: lease(t0.Add(150 * time.Second))}}
	at(125 * time.Second)
	stale := lease(t0.Add(80 * time.Second))
	r2.noteRenewal(stale)
	at(166 * time.Second)
	state, _, _, _, err := r2.judge(context.Background(), online, stale)
	if err != nil || state != edgev1alpha1.NodeOnline {
		t.Fatalf("a renewal the cache has not delivered yet: %s, %v; want online", state, err)
	}
}
