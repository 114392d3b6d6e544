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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/edgeplane/edgeplane/internal/shared/scheme"
)

// leaseNode is a node whose API calls go to a fake client with funcs in
// front; only the parts a test starts run.
func leaseNode(t *testing.T, o Options, funcs interceptor.Funcs) *node {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithInterceptorFuncs(funcs).Build()
	return newNode(Node{Name: "n1", Type: "linux", Arch: "amd64"}, o, newFakeRuntime(), c, c, func() bool { return true }, o.Clock.Now(), 0)
}

// runParts runs parts of a node until the test ends.
func runParts(t *testing.T, parts ...func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, part := range parts {
		wg.Go(func() { part(ctx) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// TestFailingReportDelaysNoRenewal: a report the API server cannot take
// (a 429 the hub forwards) just before a renewal is due does not hold the
// renewal back: it goes out on time, on a fake clock.
func TestFailingReportDelaysNoRenewal(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	var mu sync.Mutex
	var renewals []time.Time
	var logged []string
	renewed := func(obj client.Object) {
		if _, ok := obj.(*coordinationv1.Lease); ok {
			mu.Lock()
			renewals = append(renewals, clk.Now())
			mu.Unlock()
		}
	}
	o := DefaultOptions()
	o.Clock, o.MinReportInterval = clk, 0
	o.Log = funcr.New(func(_, args string) {
		mu.Lock()
		logged = append(logged, args)
		mu.Unlock()
	}, funcr.Options{})
	s := leaseNode(t, o, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			renewed(obj)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			renewed(obj)
			return c.Update(ctx, obj, opts...)
		},
	})
	// Registered, its engine answering and listed: the reporter reports
	// at once, and each report waits for the test's answer.
	s.registered.Store(true)
	s.health.probe(context.Background(), s.rt, t0)
	s.cache.listed.Store(true)
	answers, asked := make(chan error), make(chan struct{}, 1)
	s.reporter.apply = func(ctx context.Context, _ report) error {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case err := <-answers:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	runParts(t, s.keepLease, s.reporter.run)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(renewals)
	}
	eventually(t, "the first renewal", func() bool { return count() == 1 })
	<-asked
	// The reporter waits on its answer: the one timer is the next renewal's.
	eventually(t, "the lease keeper waits for the next renewal", func() bool { return clk.Waiters() == 1 })
	clk.SetTime(t0.Add(o.RenewInterval - o.Tick))
	answers <- apierrors.NewTooManyRequests("the API server is too busy", 1)
	eventually(t, "the failed report is noted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(logged, func(l string) bool { return strings.Contains(l, "API server link went down") })
	})
	clk.SetTime(t0.Add(o.RenewInterval))
	eventually(t, "the renewal due now goes out", func() bool { return count() == 2 })
	mu.Lock()
	defer mu.Unlock()
	if got := renewals[1].Sub(renewals[0]); got != o.RenewInterval {
		t.Fatalf("renewals %s apart, want %s", got, o.RenewInterval)
	}
}

// TestHungRenewalIsCut: a renewal that gets no answer (a dead stream) is
// cut after a renew interval and tried again, rather than waiting out the
// API timeout, longer than a short grace period.
func TestHungRenewalIsCut(t *testing.T) {
	var calls atomic.Int32
	bounds := make(chan time.Duration, 1)
	o := DefaultOptions()
	o.Clock, o.RenewInterval = clock.RealClock{}, 100*time.Millisecond
	s := leaseNode(t, o, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*coordinationv1.Lease); ok && calls.Add(1) == 1 {
				dl, _ := ctx.Deadline()
				bounds <- time.Until(dl)
				<-ctx.Done()
				return ctx.Err()
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	runParts(t, s.keepLease)
	if d := <-bounds; d > o.RenewInterval {
		t.Fatalf("a renewal may wait %s for its answer, want at most the renew interval %s", d.Round(time.Millisecond), o.RenewInterval)
	}
	eventually(t, "the renewal is tried again", func() bool { return calls.Load() >= 2 })
}
