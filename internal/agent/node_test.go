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

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/scheme"
)

// testNode is a node over a fake runtime, with its services in a fake
// API whose Lease updates are counted and its reports kept.
type testNode struct {
	*node
	rt       *fakeRuntime
	renewals atomic.Int32
	mu       sync.Mutex
	reports  []report
}

// service is a static service with one instance, on node n1.
func service(name, image string) *edgev1alpha1.EdgeService {
	return &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: edgev1alpha1.ImageRef(image)}}, Nodes: []string{"n1"}},
		Status: edgev1alpha1.EdgeServiceStatus{Containers: []edgev1alpha1.ServiceInstance{
			{TaskID: "task-" + name, Name: name + "-1", NodeName: "n1", Revision: 1},
		}},
	}
}

// assignmentOf is the assignment of node that the manager would write for
// services: each one's instances on the node and its configuration.
func assignmentOf(node string, services ...*edgev1alpha1.EdgeService) *edgev1alpha1.NodeAssignment {
	a := &edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: edgev1alpha1.NodeAssignmentSpec{Services: map[string]edgev1alpha1.AssignedService{}}}
	for _, svc := range services {
		e := edgev1alpha1.AssignedService{UID: string(svc.UID), Revision: 1, Spec: svc.Spec.DeploySpec}
		for _, inst := range svc.Status.Containers {
			if inst.NodeName == node {
				e.Instances = append(e.Instances, edgev1alpha1.AssignedInstance{TaskID: inst.TaskID, Name: inst.Name, Revision: inst.Revision})
			}
		}
		a.Spec.Services[edgev1alpha1.AssignmentKey(svc.Namespace, svc.Name)] = e
	}
	return a
}

func startTestNode(t *testing.T, rt *fakeRuntime, services ...*edgev1alpha1.EdgeService) *testNode {
	t.Helper()
	return startTestNodeWith(t, rt, func(*Options) {}, services...)
}

// startTestNodeWith starts a test node with its options changed.
func startTestNodeWith(t *testing.T, rt *fakeRuntime, change func(*Options), services ...*edgev1alpha1.EdgeService) *testNode {
	t.Helper()
	return startTestNodeAs(t, Node{Name: "n1", Type: "linux", Arch: "amd64"}, nil, rt, change, services...)
}

// startTestNodeAs starts test node n (named n1), whose connection's local
// address local follows when n has no address of its own.
func startTestNodeAs(t *testing.T, n Node, local *localAddress, rt *fakeRuntime, change func(*Options), services ...*edgev1alpha1.EdgeService) *testNode {
	t.Helper()
	tn := &testNode{rt: rt}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(assignmentOf("n1", services...)).
		WithInterceptorFuncs(interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*coordinationv1.Lease); ok {
				tn.renewals.Add(1)
			}
			return c.Update(ctx, obj, opts...)
		}}).Build()
	o := DefaultOptions()
	o.Clock, o.Log = clock.RealClock{}, logr.Discard()
	o.Tick, o.RenewInterval, o.RuntimeProbeInterval, o.ResyncInterval = 10*time.Millisecond, 20*time.Millisecond, 50*time.Millisecond, time.Second
	o.MetricsInterval, o.StopTimeout, o.ImagePullProgressDeadline = time.Hour, time.Second, time.Hour
	// Every change at once: the tests count and time reports.
	o.MinReportInterval = 0
	change(&o)
	tn.node = newNode(n, o, rt, c, c, func() bool { return true }, time.Now(), 0)
	if local != nil && n.Address == "" {
		tn.local = local
		local.notify(tn.reporter.changed)
	}
	tn.reporter.apply = func(_ context.Context, r report) error {
		tn.mu.Lock()
		tn.reports = append(tn.reports, r)
		tn.mu.Unlock()
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tn.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the node did not stop within 10 s of its context")
		}
	})
	return tn
}

// cpuOf is the CPU figure the newest report gives a container, -1 if none.
func (tn *testNode) cpuOf(name string) float64 {
	if e := tn.lastEntry(name); e != nil && e.CPU != nil {
		return e.CPU.Total
	}
	return -1
}

// lastEntry is the newest report's entry of a container or instance.
func (tn *testNode) lastEntry(name string) *edgev1alpha1.ObservedContainer {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	if len(tn.reports) == 0 {
		return nil
	}
	cs := tn.reports[len(tn.reports)-1].containers
	if i := slices.IndexFunc(cs, func(c edgev1alpha1.ObservedContainer) bool { return c.Name == name }); i >= 0 {
		return &cs[i]
	}
	return nil
}

func running(cs []Container) bool {
	return len(cs) == 1 && cs[0].State == edgev1alpha1.ContainerRunning
}

// TestHungPullStallsNothing: while one instance's pull hangs and one
// container's stop hangs, the Lease is renewed, the other instance runs,
// another container is removed, and the pull's progress is reported.
func TestHungPullStallsNothing(t *testing.T) {
	rt := newFakeRuntime()
	rt.images["fast@1#linux"] = true
	gate := make(chan struct{})
	rt.gates["slow@1#linux"] = gate
	rt.progress["slow@1#linux"] = []PullProgress{{Done: 1 << 20, Total: 10 << 20, Status: "Downloading"}}
	// Two containers of instances no longer placed here; one's stop hangs.
	for _, id := range []string{"orphan-a", "orphan-b"} {
		rt.containers[id] = &Container{ID: id, Name: id, State: edgev1alpha1.ContainerRunning,
			Labels: map[string]string{LabelNode: "n1", LabelTaskID: "task-" + id, LabelRevision: "1"}}
	}
	rt.slowStops["orphan-a"] = make(chan struct{}) // never closed

	tn := startTestNode(t, rt, service("slow", "slow@1#linux"), service("fast", "fast@1#linux"))
	eventually(t, "the slow pull begins", func() bool { return rt.pullsOf("slow@1#linux") == 1 })
	renewed := tn.renewals.Load()

	eventually(t, "the other instance runs", func() bool { return running(rt.byTask("task-fast")) })
	eventually(t, "the other orphan is removed", func() bool { return len(rt.byTask("task-orphan-b")) == 0 })
	eventually(t, "the Lease is renewed meanwhile", func() bool { return tn.renewals.Load() >= renewed+5 })
	eventually(t, "the pull's progress is reported", func() bool {
		e := tn.lastEntry("slow-1")
		return e != nil && e.ImagePull != nil && e.ImagePull.BytesDone == 1<<20 && e.ImagePull.BytesTotal == 10<<20 && e.TaskID == "task-slow" && e.ID == ""
	})
	if len(rt.byTask("task-slow")) != 0 || len(rt.byTask("task-orphan-a")) != 1 {
		t.Fatal("a container was created before its pull ended, or one whose stop hangs is gone")
	}

	close(gate)
	eventually(t, "the slow instance runs once its image arrived", func() bool { return running(rt.byTask("task-slow")) })
	eventually(t, "its entry is the container, with no pull", func() bool {
		e := tn.lastEntry("slow-1")
		return e != nil && e.ImagePull == nil && e.State == edgev1alpha1.ContainerRunning
	})
}

// TestFailedPullBacksOff: a refused pull marks the instance failed, with
// the reason and the next attempt, and is not tried again before it.
func TestFailedPullBacksOff(t *testing.T) {
	rt := newFakeRuntime()
	rt.failPulls["gone@1#linux"] = errorString("pulling image gone@1#linux failed: manifest unknown")
	tn := startTestNode(t, rt, service("gone", "gone@1#linux"))
	eventually(t, "the failure is reported", func() bool {
		e := tn.lastEntry("gone-1")
		return e != nil && e.FailedMessage != ""
	})
	e := tn.lastEntry("gone-1")
	if want := "pulling image gone@1#linux failed: manifest unknown; back-off 10s, next attempt at "; len(e.FailedMessage) < len(want) || e.FailedMessage[:len(want)] != want {
		t.Fatalf("failedMessage %q, want it to begin %q", e.FailedMessage, want)
	}
	time.Sleep(200 * time.Millisecond) // 20 ticks: none may pull again
	if n := rt.pullsOf("gone@1#linux"); n != 1 {
		t.Fatalf("pulled %d times within the back-off, want once", n)
	}

	// The next attempt, once its back-off is over, shows its progress
	// rather than the failure it may mend.
	rt.mu.Lock()
	delete(rt.failPulls, "gone@1#linux")
	rt.gates["gone@1#linux"] = make(chan struct{})
	rt.progress["gone@1#linux"] = []PullProgress{{Done: 5, Total: 10, Status: "Downloading"}}
	rt.mu.Unlock()
	tn.workers.mu.Lock()
	w := tn.workers.byTask["task-gone"]
	tn.workers.mu.Unlock()
	w.mu.Lock()
	w.fail.retryAt = time.Now() // the back-off is over
	w.mu.Unlock()
	w.poke()
	eventually(t, "the retry's progress is reported", func() bool {
		e := tn.lastEntry("gone-1")
		return e != nil && e.ImagePull != nil && e.ImagePull.BytesDone == 5 && e.FailedMessage == ""
	})
	close(rt.gates["gone@1#linux"])
	eventually(t, "a pull that then succeeds clears the failure", func() bool {
		e := tn.lastEntry("gone-1")
		return e != nil && e.ImagePull == nil && e.FailedMessage == "" && e.State == edgev1alpha1.ContainerRunning
	})
}

// TestAdoptsBeforeItCreates: a restarted agent whose engine is slow to list
// creates nothing until it knows what runs, then adopts the container.
func TestAdoptsBeforeItCreates(t *testing.T) {
	rt := newFakeRuntime()
	rt.images["fast@1#linux"] = true
	rt.containers["c-running"] = &Container{ID: "c-running", Name: "fast-1", State: edgev1alpha1.ContainerRunning, StartedAt: time.Now(),
		Labels: map[string]string{LabelNode: "n1", LabelTaskID: "task-fast", LabelRevision: "1", LabelImageRef: "fast@1#linux"}}
	gate := make(chan struct{})
	rt.listGate = gate
	tn := startTestNode(t, rt, service("fast", "fast@1#linux"))
	eventually(t, "the Lease is renewed while the list hangs", func() bool { return tn.renewals.Load() >= 3 })
	tn.mu.Lock()
	early := len(tn.reports)
	tn.mu.Unlock()
	if early > 0 {
		t.Fatalf("%d reports before the engine was listed: the node would be shown running nothing", early)
	}
	close(gate)
	eventually(t, "the running container is reported", func() bool {
		e := tn.lastEntry("fast-1")
		return e != nil && e.ID == "c-running" && e.State == edgev1alpha1.ContainerRunning
	})
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.creates != 0 || len(rt.containers) != 1 {
		t.Fatalf("%d creates, %d containers: the agent acted before it knew what runs", rt.creates, len(rt.containers))
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// runtimeStatus is the newest report's RuntimeReady status, "" before any.
func (tn *testNode) runtimeStatus() metav1.ConditionStatus {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	if len(tn.reports) == 0 || tn.reports[len(tn.reports)-1].runtime == nil {
		return ""
	}
	return tn.reports[len(tn.reports)-1].runtime.Status
}

// TestHungEngineIsNotReady: an engine whose pings hang is reported not
// ready within the probe's bound, its Lease still renewed; once it answers
// again it is ready again.
func TestHungEngineIsNotReady(t *testing.T) {
	rt := newFakeRuntime()
	tn := startTestNode(t, rt)
	eventually(t, "the engine is reported ready", func() bool { return tn.runtimeStatus() == metav1.ConditionTrue })

	rt.hangPings(true)
	eventually(t, "an engine that stopped answering is reported not ready", func() bool { return tn.runtimeStatus() == metav1.ConditionFalse })
	renewed := tn.renewals.Load()
	eventually(t, "the Lease is renewed while pings hang", func() bool { return tn.renewals.Load() >= renewed+5 })
	tn.mu.Lock()
	msg := tn.reports[len(tn.reports)-1].runtime.Message
	tn.mu.Unlock()
	if !strings.Contains(msg, "deadline exceeded") {
		t.Errorf("the condition's message is %q, want the probe's deadline", msg)
	}

	rt.hangPings(false)
	eventually(t, "the engine is ready again once it answers", func() bool { return tn.runtimeStatus() == metav1.ConditionTrue })
}

// TestEngineInfoReadLate: when the engine answers its ping but not yet
// what it is (an Info call cut on a busy device), the node reads it again
// at the next probes and reports it, although nothing else changed.
func TestEngineInfoReadLate(t *testing.T) {
	rt := newFakeRuntime()
	rt.infoFailures = 3
	tn := startTestNode(t, rt)
	eventually(t, "the engine's version is reported", func() bool {
		tn.mu.Lock()
		defer tn.mu.Unlock()
		return len(tn.reports) > 0 && tn.reports[len(tn.reports)-1].info.RuntimeVersion == "fake"
	})
}

// TestHealthProbe: a probe says whether the engine's state changed, and
// the condition follows it.
func TestHealthProbe(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		pings   []bool // each probe hangs (true) or answers
		changed []bool
		want    metav1.ConditionStatus
	}{
		{"first answer", []bool{false}, []bool{true}, metav1.ConditionTrue},
		{"first probe hangs", []bool{true}, []bool{true}, metav1.ConditionFalse},
		{"steady", []bool{false, false, false}, []bool{true, false, false}, metav1.ConditionTrue},
		{"goes down, stays down", []bool{false, true, true}, []bool{true, true, false}, metav1.ConditionFalse},
		{"comes back", []bool{true, true, false}, []bool{true, false, true}, metav1.ConditionTrue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealth(20*time.Millisecond, func(string, ...any) {})
			if h.condition() != nil {
				t.Fatal("a condition before the first probe")
			}
			for i, hang := range tc.pings {
				rt := newFakeRuntime()
				rt.hangPings(hang)
				if got := h.probe(context.Background(), rt, now.Add(time.Duration(i)*time.Second)); got != tc.changed[i] {
					t.Errorf("probe %d: changed %v, want %v", i, got, tc.changed[i])
				}
			}
			c := h.condition()
			if c.Status != tc.want || h.ready() != (tc.want == metav1.ConditionTrue) {
				t.Errorf("condition %s (ready %v), want %s", c.Status, h.ready(), tc.want)
			}
		})
	}
}

// TestSteadyFiguresCostNoReports: figures sampled every interval are
// reported when they move past a threshold, not at every sample.
func TestSteadyFiguresCostNoReports(t *testing.T) {
	tn, rt := startFiguresNode(t, 100*time.Millisecond)
	if n := tn.reportsWithCPU(rt, 12); n != 0 || tn.cpuOf("app-1") != 10 { // within the threshold
		t.Fatalf("%d reports for figures that barely moved (CPU shown %v)", n, tn.cpuOf("app-1"))
	}
	rt.setCPU(30)
	eventually(t, "a figure past its threshold is reported", func() bool { return tn.cpuOf("app-1") == 30 })
}

// TestFiguresArePaced: moving figures alone ask for a report at most once
// per FiguresInterval, however far they move (TestSteadyFiguresCostNoReports
// sees them reported once it passed).
func TestFiguresArePaced(t *testing.T) {
	tn, rt := startFiguresNode(t, time.Hour)
	if n := tn.reportsWithCPU(rt, 60); n != 0 || tn.cpuOf("app-1") != 10 { // past the threshold
		t.Fatalf("%d reports of figures alone within FiguresInterval (CPU shown %v)", n, tn.cpuOf("app-1"))
	}
}

// startFiguresNode runs a node with one container at 10 % CPU, sampled
// every 20 ms, and waits for its first figures.
func startFiguresNode(t *testing.T, figuresInterval time.Duration) (*testNode, *fakeRuntime) {
	t.Helper()
	rt := newFakeRuntime()
	rt.images["app@1#linux"] = true
	rt.setCPU(10)
	tn := startTestNodeWith(t, rt, func(o *Options) { o.MetricsInterval, o.FiguresInterval = 20*time.Millisecond, figuresInterval }, service("app", "app@1#linux"))
	eventually(t, "the first figures are reported", func() bool { return tn.cpuOf("app-1") == 10 })
	return tn, rt
}

// reportsWithCPU sets the container's CPU and counts the reports made
// over the next 500 ms (about 25 samples).
func (tn *testNode) reportsWithCPU(rt *fakeRuntime, cpu float64) int {
	tn.mu.Lock()
	before := len(tn.reports)
	tn.mu.Unlock()
	rt.setCPU(cpu)
	time.Sleep(500 * time.Millisecond)
	tn.mu.Lock()
	defer tn.mu.Unlock()
	return len(tn.reports) - before
}
