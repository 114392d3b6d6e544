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
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestReportDue(t *testing.T) {
	first := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		dirty   bool
		settled bool
		after   time.Duration // since the first change
		window  time.Duration
		want    bool
	}{
		{"nothing to report", false, false, time.Hour, time.Second, false},
		{"settled, nothing to report", false, true, time.Hour, time.Second, false},
		{"no window: at once", true, false, 0, 0, true},
		{"settled: at once", true, true, 0, time.Second, true},
		{"unsettled, within the window from the first change: held", true, false, 999 * time.Millisecond, time.Second, false},
		{"unsettled, the window is over: reported", true, false, time.Second, time.Second, true},
		{"long after", true, false, time.Minute, time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reportDue(tc.dirty, tc.settled, first, first.Add(tc.after), tc.window); got != tc.want {
				t.Fatalf("reportDue = %v, want %v", got, tc.want)
			}
		})
	}
	// A node's first report waits for no window: nothing marked when its
	// changes began.
	if !reportDue(true, false, time.Time{}, first, time.Second) {
		t.Fatal("the first report of a node is held")
	}
}

func TestSampleDue(t *testing.T) {
	next := time.Date(2026, 11, 23, 12, 1, 0, 0, time.UTC)
	const interval = time.Minute
	for _, tc := range []struct {
		name   string
		dirty  bool
		before time.Duration // now is this long before the figures are due
		want   bool
	}{
		{"due", false, 0, true},
		{"past due", false, -time.Second, true},
		{"not due, nothing to report", false, time.Second, false},
		{"changes to report, due within half an interval: ride along", true, 30 * time.Second, true},
		{"changes to report, due later than that: wait", true, 31 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sampleDue(tc.dirty, next.Add(-tc.before), next, interval); got != tc.want {
				t.Fatalf("sampleDue = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestChangedKeepsTheFirst: a burst of changes is held from its first,
// not pushed back by each one.
func TestChangedKeepsTheFirst(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	r := newReporter(&node{o: Options{Clock: clk, MinReportInterval: time.Second}, link: newLink(time.Second, func(string, ...any) {})})
	r.dirty = false
	r.changed()
	clk.Step(600 * time.Millisecond)
	r.changed()
	clk.Step(400 * time.Millisecond)
	r.changed()
	if !reportDue(r.dirty, false, r.since, clk.Now(), r.s.o.MinReportInterval) {
		t.Fatal("a change 1 s after the first is not reported: each change pushed the report back")
	}
}

// TestSettled: a node waiting on a pull for a window or longer has
// settled (the pull is a state of its own then, reported as it goes),
// not before; one whose container was started but runs only later (the
// simulator's engine) has not, until it runs.
func TestSettled(t *testing.T) {
	rt := newFakeRuntime()
	pull := make(chan struct{})
	rt.gates["app@1#linux"] = pull
	rt.startGate = make(chan struct{})
	tn := startTestNode(t, rt, service("app", "app@1#linux"))
	settled := func() bool { return tn.workers.settled(time.Now(), time.Hour) }
	eventually(t, "the image is pulled", tn.workers.pulling)
	if settled() {
		t.Fatal("settled within a window of the pull's start")
	}
	if !tn.workers.settled(time.Now().Add(time.Hour), time.Hour) {
		t.Fatal("not settled a window after the pull began")
	}
	close(pull)
	eventually(t, "the container is started", func() bool {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.starts == 1
	})
	for range 20 {
		if settled() {
			t.Fatal("settled while the container it started is only created")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(rt.startGate)
	eventually(t, "settled once the container runs", settled)
}

// TestStartReportedOnce: with the default window, a container created
// and running a moment later is reported once, running: one write, not
// one for each step.
func TestStartReportedOnce(t *testing.T) {
	rt := newFakeRuntime()
	pull := make(chan struct{})
	rt.gates["app@1#linux"] = pull
	rt.startGate = make(chan struct{})
	tn := startTestNodeWith(t, rt, func(o *Options) { o.MinReportInterval = DefaultOptions().MinReportInterval }, service("app", "app@1#linux"))
	// A node's first report goes out at once, whatever it shows: let it
	// go while the image is pulled.
	eventually(t, "the node's first report", func() bool {
		tn.mu.Lock()
		defer tn.mu.Unlock()
		return len(tn.reports) > 0
	})
	close(pull)
	eventually(t, "the container is started", func() bool {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.starts == 1
	})
	time.Sleep(300 * time.Millisecond) // a report now would show it created
	close(rt.startGate)
	eventually(t, "the container is reported running", func() bool {
		c := tn.lastEntry("app-1")
		return c != nil && c.State == edgev1alpha1.ContainerRunning
	})
	tn.mu.Lock()
	defer tn.mu.Unlock()
	for i, r := range tn.reports {
		for _, c := range r.containers {
			if c.Name == "app-1" && c.State == edgev1alpha1.ContainerCreated {
				t.Fatalf("report %d shows the container created before it ran", i)
			}
		}
	}
}

// A node running more containers than its status holds reports the ones
// edgeplane manages first, and never more than the schema accepts.
func TestWithinMaxItems(t *testing.T) {
	entries := func(managed, others int) []edgev1alpha1.ObservedContainer {
		var cs []edgev1alpha1.ObservedContainer
		for i := range managed {
			cs = append(cs, edgev1alpha1.ObservedContainer{Name: fmt.Sprintf("m-%04d", i), TaskID: fmt.Sprintf("t-%d", i)})
		}
		for i := range others {
			cs = append(cs, edgev1alpha1.ObservedContainer{Name: fmt.Sprintf("a-%04d", i)})
		}
		// As the reporter has them: by name.
		slices.SortFunc(cs, func(a, b edgev1alpha1.ObservedContainer) int { return strings.Compare(a.Name, b.Name) })
		return cs
	}
	for _, tc := range []struct {
		name                     string
		managed, others          int
		wantManaged, wantLeftOut int
	}{
		{"within", 100, 10, 100, 0},
		{"exactly full", 2000, 48, 2000, 0},
		{"others left out first", 2000, 100, 2000, 52},
		{"managed beyond what fits", 2100, 5, 2048, 57},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, left := withinMaxItems(entries(tc.managed, tc.others))
			managed := 0
			for i, c := range out {
				if c.TaskID != "" {
					managed++
				}
				if i > 0 && out[i-1].Name >= c.Name {
					t.Fatalf("not sorted by name at %d", i)
				}
			}
			if len(out) > maxReported || managed != tc.wantManaged || left != tc.wantLeftOut {
				t.Fatalf("%d entries, %d managed, %d left out; want %d managed, %d left out", len(out), managed, left, tc.wantManaged, tc.wantLeftOut)
			}
		})
	}
}

func TestFiguresMoved(t *testing.T) {
	stats := func(cpu float64, mem, size int64) Stats {
		return Stats{CPU: &edgev1alpha1.CPUUsage{Total: cpu}, Memory: &edgev1alpha1.MemoryUsage{Usage: mem, Limit: 256 << 20}, Size: &edgev1alpha1.SizeUsage{Usage: size}}
	}
	base := stats(10, 100<<20, 50<<20)
	for _, tc := range []struct {
		name string
		b    Stats
		want bool
	}{
		{"the same", base, false},
		{"CPU within 5 points", stats(14.9, 100<<20, 50<<20), false},
		{"CPU 5 points up", stats(15, 100<<20, 50<<20), true},
		{"CPU 5 points down", stats(5, 100<<20, 50<<20), true},
		{"memory within 10 %", stats(10, 109<<20, 50<<20), false},
		{"memory 10 % up", stats(10, 110<<20, 50<<20), true},
		{"disk 10 % down", stats(10, 100<<20, 45<<20), true},
		{"a limit changed", Stats{CPU: base.CPU, Memory: &edgev1alpha1.MemoryUsage{Usage: 100 << 20, Limit: 512 << 20}, Size: base.Size}, true},
		{"figures gone", Stats{CPU: base.CPU, Size: base.Size}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := figuresMoved(base, tc.b); got != tc.want {
				t.Fatalf("moved %v, want %v", got, tc.want)
			}
		})
	}
	// A small container's 60 % is under 1 MiB: no report for it.
	if figuresMoved(stats(1, 900<<10, 1<<20), stats(1, 1500<<10, 1<<20)) {
		t.Fatal("moved on less than 1 MiB")
	}
}
