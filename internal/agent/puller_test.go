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
	"errors"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// eventually polls cond for up to 10 s: the parts run on goroutines.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
	}
}

func ensureAsync(p *puller, image string, policy edgev1alpha1.PullPolicy) (<-chan error, <-chan *pull) {
	errs, pulls := make(chan error, 1), make(chan *pull, 1)
	go func() {
		errs <- p.ensure(context.Background(), image, policy, nil, func(pl *pull) { pulls <- pl })
	}()
	return errs, pulls
}

func TestPullPolicy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    edgev1alpha1.PullPolicy
		present   bool
		wantPulls int
		wantErr   string
	}{
		{"IfNotPresent, present: no pull", edgev1alpha1.PullIfNotPresent, true, 0, ""},
		{"IfNotPresent, absent: pulled", edgev1alpha1.PullIfNotPresent, false, 1, ""},
		{"Always, present: pulled anyway", edgev1alpha1.PullAlways, true, 1, ""},
		{"Never, present: no pull", edgev1alpha1.PullNever, true, 0, ""},
		{"Never, absent: refused, saying why", edgev1alpha1.PullNever, false, 0, "pullPolicy Never forbids pulling it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newFakeRuntime()
			rt.images["app@1#linux"] = tc.present
			p := newPuller(rt, clocktesting.NewFakeClock(t0), 2, time.Minute)
			err := p.ensure(context.Background(), "app@1#linux", tc.policy, nil, func(*pull) {})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("ensure: %v, want %q", err, tc.wantErr)
			}
			if got := rt.pullsOf("app@1#linux"); got != tc.wantPulls {
				t.Fatalf("%d pulls, want %d", got, tc.wantPulls)
			}
		})
	}
}

// TestPullerSharesOnePull: instances of one image wait on one pull.
func TestPullerSharesOnePull(t *testing.T) {
	rt := newFakeRuntime()
	gate := make(chan struct{})
	rt.gates["app@1"] = gate
	p := newPuller(rt, clocktesting.NewFakeClock(t0), 2, time.Minute)
	e1, p1 := ensureAsync(p, "app@1", edgev1alpha1.PullIfNotPresent)
	e2, p2 := ensureAsync(p, "app@1", edgev1alpha1.PullIfNotPresent)
	if a, b := <-p1, <-p2; a != b {
		t.Fatal("two instances of one image wait on two pulls")
	}
	close(gate)
	if err := errors.Join(<-e1, <-e2); err != nil {
		t.Fatal(err)
	}
	if n := rt.pullsOf("app@1"); n != 1 {
		t.Fatalf("the image was pulled %d times, want once", n)
	}
}

// TestPullerBoundsParallelPulls: with one slot, a second image waits,
// queued, until the first pull ends.
func TestPullerBoundsParallelPulls(t *testing.T) {
	rt := newFakeRuntime()
	gateA, gateB := make(chan struct{}), make(chan struct{})
	rt.gates["a@1"], rt.gates["b@1"] = gateA, gateB
	p := newPuller(rt, clocktesting.NewFakeClock(t0), 1, time.Minute)
	ea, _ := ensureAsync(p, "a@1", edgev1alpha1.PullAlways)
	eventually(t, "a's pull runs", func() bool { return rt.pullsOf("a@1") == 1 })
	eb, pb := ensureAsync(p, "b@1", edgev1alpha1.PullAlways)
	plB := <-pb
	if _, queued := plB.progress(); !queued || rt.pullsOf("b@1") != 0 {
		t.Fatal("a second pull runs beside the first with one slot")
	}
	close(gateA)
	if err := <-ea; err != nil {
		t.Fatal(err)
	}
	eventually(t, "b's pull runs once a's ended", func() bool { return rt.pullsOf("b@1") == 1 })
	if _, queued := plB.progress(); queued {
		t.Fatal("b's pull runs but says it is queued")
	}
	close(gateB)
	if err := <-eb; err != nil {
		t.Fatal(err)
	}
}

// TestPullerCutsAStalledPull: no progress for the deadline cuts the pull
// with a reason; progress before it keeps the pull going.
func TestPullerCutsAStalledPull(t *testing.T) {
	rt := newFakeRuntime()
	rt.gates["big@1"] = make(chan struct{}) // never closed
	clk := clocktesting.NewFakeClock(t0)
	p := newPuller(rt, clk, 2, time.Minute)
	errs, pulls := ensureAsync(p, "big@1", edgev1alpha1.PullAlways)
	pl := <-pulls
	eventually(t, "the pull runs", func() bool { return rt.pullsOf("big@1") == 1 && clk.HasWaiters() })

	// Progress every 40 s for two minutes: never 1 min without any.
	for i := 1; i <= 3; i++ {
		clk.Step(40 * time.Second)
		rt.mu.Lock()
		progress := rt.live["big@1"]
		rt.mu.Unlock()
		progress(PullProgress{Done: int64(i) << 20, Total: 8 << 20, Status: "Downloading"})
		select {
		case err := <-errs:
			t.Fatalf("a pull that makes progress was cut: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if pr, _ := pl.progress(); pr.Done != 3<<20 || pr.Total != 8<<20 {
		t.Fatalf("progress %+v, want 3 MiB of 8", pr)
	}
	// Then nothing for a minute.
	eventually(t, "the watchdog waits", clk.HasWaiters)
	clk.Step(time.Minute)
	err := <-errs
	if err == nil || !strings.Contains(err.Error(), "made no progress for 1m0s and was cut") {
		t.Fatalf("a stalled pull ended with %v", err)
	}
}

// TestPullerLastWaiterCuts: a pull nobody waits for any more is cut.
func TestPullerLastWaiterCuts(t *testing.T) {
	rt := newFakeRuntime()
	rt.gates["big@1"] = make(chan struct{})
	p := newPuller(rt, clocktesting.NewFakeClock(t0), 2, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	var pl *pull
	started := make(chan struct{})
	go func() {
		errs <- p.ensure(ctx, "big@1", edgev1alpha1.PullAlways, nil, func(x *pull) { pl = x; close(started) })
	}()
	<-started
	eventually(t, "the pull runs", func() bool { return rt.pullsOf("big@1") == 1 })
	cancel()
	<-errs
	select {
	case <-pl.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the pull goes on with no one waiting for it")
	}
}

// An instance's back-off doubles from retryBase to retryMax per failure,
// as the kubelet's, and starts anew once it has not failed for long.
func TestRetries(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	b := newRetries(clk)
	for attempt, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute} {
		b.Next("t1", clk.Now())
		if got := b.Get("t1"); got != want {
			t.Errorf("failure %d: back-off %s, want %s", attempt+1, got, want)
		}
		clk.Step(b.Get("t1"))
	}
	if got := b.Get("t2"); got != 0 {
		t.Errorf("another task's back-off is %s, want none", got)
	}
	clk.Step(2*retryMax + time.Second)
	b.Next("t1", clk.Now())
	if got := b.Get("t1"); got != retryBase {
		t.Errorf("after %s without a failure: back-off %s, want %s", 2*retryMax+time.Second, got, retryBase)
	}
}

func TestFailureMessage(t *testing.T) {
	msg := failureMessage(errors.New("pulling image box:1 made no progress for 1m0s and was cut"), 20*time.Second, t0)
	if want := "pulling image box:1 made no progress for 1m0s and was cut; back-off 20s, next attempt at 2026-11-26T12:00:00Z"; msg != want {
		t.Fatalf("message %q, want %q", msg, want)
	}
	long := failureMessage(errors.New(strings.Repeat("é", maxMessage)), retryMax, t0)
	if len(long) > maxMessage || !strings.HasSuffix(long, "next attempt at 2026-11-26T12:00:00Z") || !strings.Contains(long, "é...;") {
		t.Fatalf("a long error is cut badly: %d bytes, ends %q", len(long), long[len(long)-80:])
	}
}
