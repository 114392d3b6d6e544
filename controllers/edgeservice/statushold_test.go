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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func cond(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason}
}

// deploying is the status of a healthy rollout under way, of a service
// observed before.
func deploying() *edgev1alpha1.EdgeServiceStatus {
	return &edgev1alpha1.EdgeServiceStatus{ObservedGeneration: 1, Revision: 1, Replicas: 2, Conditions: []metav1.Condition{
		cond(edgev1alpha1.ConditionAvailable, metav1.ConditionFalse, edgev1alpha1.ReasonInstancesNotReady),
		cond(edgev1alpha1.ConditionProgressing, metav1.ConditionTrue, edgev1alpha1.ReasonDeploying),
		cond(edgev1alpha1.ConditionDegraded, metav1.ConditionFalse, edgev1alpha1.ReasonAsExpected),
	}}
}

func TestProgressOnly(t *testing.T) {
	with := func(mod func(*edgev1alpha1.EdgeServiceStatus)) *edgev1alpha1.EdgeServiceStatus {
		s := deploying()
		mod(s)
		return s
	}
	setCond := func(s *edgev1alpha1.EdgeServiceStatus, c metav1.Condition) {
		for i := range s.Conditions {
			if s.Conditions[i].Type == c.Type {
				s.Conditions[i] = c
				return
			}
		}
		s.Conditions = append(s.Conditions, c)
	}
	empty := &edgev1alpha1.EdgeServiceStatus{}
	// done is the status of revision 1 run everywhere.
	done := with(func(s *edgev1alpha1.EdgeServiceStatus) {
		s.ReadyReplicas = 2
		setCond(s, cond(edgev1alpha1.ConditionAvailable, metav1.ConditionTrue, edgev1alpha1.ReasonAllInstancesReady))
		setCond(s, cond(edgev1alpha1.ConditionProgressing, metav1.ConditionFalse, edgev1alpha1.ReasonRolloutComplete))
	})
	for _, c := range []struct {
		name    string
		was, is *edgev1alpha1.EdgeServiceStatus
		want    bool
	}{
		{"a spec change after a finished rollout", done, with(func(s *edgev1alpha1.EdgeServiceStatus) { s.Revision = 2 }), true},
		{"a new service's first status", empty, deploying(), false},
		{"one more instance runs, the rollout goes on", deploying(), with(func(s *edgev1alpha1.EdgeServiceStatus) { s.ReadyReplicas = 1 }), true},
		{"the rollout is done", deploying(), with(func(s *edgev1alpha1.EdgeServiceStatus) {
			setCond(s, cond(edgev1alpha1.ConditionProgressing, metav1.ConditionFalse, edgev1alpha1.ReasonRolloutComplete))
		}), false},
		{"an instance failed", done, with(func(s *edgev1alpha1.EdgeServiceStatus) {
			s.FailedReplicas = 1
			setCond(s, cond(edgev1alpha1.ConditionDegraded, metav1.ConditionTrue, edgev1alpha1.ReasonDeployFailed))
		}), false},
		{"placement cannot place every instance", done, with(func(s *edgev1alpha1.EdgeServiceStatus) {
			setCond(s, cond(edgev1alpha1.ConditionDegraded, metav1.ConditionTrue, edgev1alpha1.ReasonPlacementFailed))
		}), false},
		{"recovered from a failure", with(func(s *edgev1alpha1.EdgeServiceStatus) {
			setCond(s, cond(edgev1alpha1.ConditionDegraded, metav1.ConditionTrue, edgev1alpha1.ReasonDeployFailed))
		}), deploying(), false},
		{"a stalled rollout changed", with(func(s *edgev1alpha1.EdgeServiceStatus) {
			setCond(s, cond(edgev1alpha1.ConditionStalled, metav1.ConditionTrue, edgev1alpha1.ReasonProgressDeadlineExceeded))
		}), deploying(), false},
		{"paused between waves", done, with(func(s *edgev1alpha1.EdgeServiceStatus) {
			setCond(s, cond(edgev1alpha1.ConditionProgressing, metav1.ConditionUnknown, edgev1alpha1.ReasonRolloutPaused))
		}), false},
		{"waiting between waves", done, with(func(s *edgev1alpha1.EdgeServiceStatus) {
			setCond(s, cond(edgev1alpha1.ConditionProgressing, metav1.ConditionTrue, edgev1alpha1.ReasonRollingUpdate))
		}), false},
		{"an agent that reads its instances from the status", done, with(func(s *edgev1alpha1.EdgeServiceStatus) {
			s.Containers = []edgev1alpha1.ServiceInstance{{Name: "api-1", NodeName: "legacy"}}
		}), false},
	} {
		if got := progressOnly(c.was, c.is); got != c.want {
			t.Errorf("%s: progressOnly = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestStatusHolds shows that a write of progress waits at most the hold
// from the first reconcile that held it, that another write is never
// held, and that a written status starts the next hold afresh.
func TestStatusHolds(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
	svc := types.NamespacedName{Namespace: "ns", Name: "api"}
	h := newStatusHolds(5 * time.Second)
	for _, step := range []struct {
		name     string
		after    time.Duration
		progress bool
		want     time.Duration
		written  bool
	}{
		{"the first reconcile holds its progress", 0, true, 5 * time.Second, false},
		{"a reconcile 2 s later holds it 3 s more", 2 * time.Second, true, 3 * time.Second, false},
		{"a failure is written at once, which ends the hold", 0, false, 0, true},
		{"a progress write after that waits again", time.Second, true, 5 * time.Second, false},
		{"at the hold's end it is written", 5 * time.Second, true, 0, true},
		{"and the next progress waits from there", time.Second, true, 5 * time.Second, false},
		{"past its end, at once", time.Minute, true, 0, true},
	} {
		clk.SetTime(clk.Now().Add(step.after))
		got := h.left(svc, step.progress, clk.Now())
		if got != step.want {
			t.Fatalf("%s: left = %v, want %v", step.name, got, step.want)
		}
		if step.written {
			h.written(svc)
		}
	}
	if got := newStatusHolds(0).left(svc, true, clk.Now()); got != 0 {
		t.Errorf("a hold of 0 waits %v", got)
	}
	var none *statusHolds
	if got := none.left(svc, true, clk.Now()); got != 0 {
		t.Errorf("a reconciler without holds waits %v", got)
	}
}
