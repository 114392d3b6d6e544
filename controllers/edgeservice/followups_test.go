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

package edgeservice

import (
	"maps"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestFollowUpDelay(t *testing.T) {
	for _, c := range []struct {
		cost, want time.Duration
	}{
		{0, 0},                                   // never reconciled: at once
		{time.Millisecond, 5 * time.Millisecond}, // a small service: at once, in effect
		{100 * time.Millisecond, 500 * time.Millisecond},
		{time.Second, maxFollowUpDelay},
		{time.Minute, maxFollowUpDelay}, // bounded: a follow-up still comes
	} {
		if got := followUpDelay(c.cost); got != c.want {
			t.Errorf("followUpDelay(%v) = %v, want %v", c.cost, got, c.want)
		}
	}
}

// TestFollowUps shows that the follow-ups of a costly service fold into
// one reconcile, queued after the delay, while another service's come at
// once.
func TestFollowUps(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Clock: clk})
	defer q.ShutDown()
	wide, small := types.NamespacedName{Namespace: "ns", Name: "wide"}, types.NamespacedName{Namespace: "ns", Name: "small"}
	f := newFollowUps()
	f.took(wide, 200*time.Millisecond)
	for range 1000 { // one report per node of a wide service
		f.add(q, wide)
	}
	f.add(q, small)
	waitLen := func(n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for q.Len() != n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if q.Len() != n {
			t.Fatalf("queue holds %d, want %d", q.Len(), n)
		}
	}
	waitLen(1)
	if got, _ := q.Get(); got.NamespacedName != small {
		t.Fatalf("first queued %v, want %v", got, small)
	}
	clk.Step(999 * time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	if q.Len() != 0 {
		t.Fatalf("the wide service is queued before its delay")
	}
	clk.Step(time.Millisecond)
	waitLen(1)
	if got, _ := q.Get(); got.NamespacedName != wide {
		t.Fatalf("queued %v, want %v", got, wide)
	}
	// Deleted and made again under the same name: its cost is gone, and
	// its first follow-up comes at once (once the reconcile under way is
	// done).
	f.dropService(wide)
	f.add(q, wide)
	q.Done(reconcile.Request{NamespacedName: wide})
	waitLen(1)
}

func TestStatusOnly(t *testing.T) {
	base := func() *edgev1alpha1.EdgeService {
		return &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Generation: 3, Labels: map[string]string{"a": "1"},
			Annotations: map[string]string{"b": "2"}, Finalizers: []string{edgev1alpha1.FinalizerContainers}}}
	}
	now := metav1.Now()
	for _, c := range []struct {
		name   string
		change func(*edgev1alpha1.EdgeService)
		want   bool
	}{
		{"status", func(s *edgev1alpha1.EdgeService) { s.Status.ReadyReplicas = 7; s.ResourceVersion = "9" }, true},
		{"spec", func(s *edgev1alpha1.EdgeService) { s.Generation++ }, false},
		{"a label", func(s *edgev1alpha1.EdgeService) { s.Labels["a"] = "2" }, false},
		{"the force-delete annotation", func(s *edgev1alpha1.EdgeService) { s.Annotations[edgev1alpha1.AnnotationForceDelete] = "" }, false},
		{"a finalizer", func(s *edgev1alpha1.EdgeService) { s.Finalizers = nil }, false},
		{"deletion", func(s *edgev1alpha1.EdgeService) { s.DeletionTimestamp = &now }, false},
		{"an owner", func(s *edgev1alpha1.EdgeService) { s.OwnerReferences = []metav1.OwnerReference{{Name: "x"}} }, false},
	} {
		cur := base()
		c.change(cur)
		if got := statusOnly(base(), cur); got != c.want {
			t.Errorf("%s: statusOnly = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestChangedTasks shows which containers of a report a service follows:
// a change of state, revision or failure, an added or a gone container;
// not new usage figures, nor containers no task runs.
func TestChangedTasks(t *testing.T) {
	running := func(task string, cpu float64) edgev1alpha1.ObservedContainer {
		return edgev1alpha1.ObservedContainer{Name: "c-" + task, TaskID: task, Revision: 1, State: edgev1alpha1.ContainerRunning,
			CPU: &edgev1alpha1.CPUUsage{Total: cpu}}
	}
	exited := running("t1", 0)
	exited.State, exited.CPU = edgev1alpha1.ContainerExited, nil
	next := running("t1", 1)
	next.Revision = 2
	system := edgev1alpha1.ObservedContainer{Name: "system-0", State: edgev1alpha1.ContainerRunning}
	for _, c := range []struct {
		name    string
		was, is []edgev1alpha1.ObservedContainer
		want    []string
	}{
		{"usage alone", []edgev1alpha1.ObservedContainer{running("t1", 1), running("t2", 1)}, []edgev1alpha1.ObservedContainer{running("t1", 2), running("t2", 3)}, nil},
		{"one started", []edgev1alpha1.ObservedContainer{running("t1", 1)}, []edgev1alpha1.ObservedContainer{running("t1", 1), running("t2", 0)}, []string{"t2"}},
		{"one gone", []edgev1alpha1.ObservedContainer{running("t1", 1), running("t2", 1)}, []edgev1alpha1.ObservedContainer{running("t2", 1)}, []string{"t1"}},
		{"one exited", []edgev1alpha1.ObservedContainer{running("t1", 1), running("t2", 1)}, []edgev1alpha1.ObservedContainer{exited, running("t2", 1)}, []string{"t1"}},
		{"a new revision", []edgev1alpha1.ObservedContainer{running("t1", 1)}, []edgev1alpha1.ObservedContainer{next}, []string{"t1"}},
		{"a container no task runs", []edgev1alpha1.ObservedContainer{running("t1", 1)}, []edgev1alpha1.ObservedContainer{running("t1", 1), system}, nil},
	} {
		got := slices.Sorted(maps.Keys(changedTasks(c.was, c.is)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: changedTasks = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFollowsTasks(t *testing.T) {
	e := edgev1alpha1.AssignedService{Instances: []edgev1alpha1.AssignedInstance{{TaskID: "t1"}, {TaskID: "t2"}}}
	if !followsTasks(e, map[string]bool{"t2": true}) {
		t.Error("a service with a changed instance does not follow it")
	}
	if followsTasks(e, map[string]bool{"t3": true}) {
		t.Error("a service follows another service's instance")
	}
}
