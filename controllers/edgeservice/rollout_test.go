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
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/internal/conditions"
)

// Which nodes a rollout of revision 2 moves, by strategy: a table over
// the pure planRollout.
func TestPlanRollout(t *testing.T) {
	// at is a node of one instance at rev: running, failed or deploying.
	at := func(name string, rev int64, state string) rolloutNode {
		n := rolloutNode{name: name, revision: rev, instances: 1}
		switch state {
		case "running":
			n.available = 1
		case "failed":
			n.failed = 1
		}
		return n
	}
	fleet := func(first ...rolloutNode) []rolloutNode {
		out := append([]rolloutNode(nil), first...)
		for i := len(first); i < 8; i++ {
			out = append(out, at(fmt.Sprintf("n%d", i), 1, "running"))
		}
		return out
	}
	rolling := func(maxUnavailable, canary *intstr.IntOrString) edgev1alpha1.EdgeServiceSpec {
		return edgev1alpha1.EdgeServiceSpec{Strategy: edgev1alpha1.ServiceStrategy{Type: edgev1alpha1.StrategyRollingUpdate,
			RollingUpdate: &edgev1alpha1.RollingUpdateStrategy{MaxUnavailable: maxUnavailable, Canary: canary}}}
	}
	count, percent := func(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v },
		func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	paused := edgev1alpha1.EdgeServiceSpec{Paused: true}
	for _, tc := range []struct {
		name     string
		spec     edgev1alpha1.EdgeServiceSpec
		nodes    []rolloutNode
		exceeded time.Duration
		want     string // the nodes at revision 2, then why it stopped
	}{
		{"all at once moves every node", edgev1alpha1.EdgeServiceSpec{}, fleet(), 0, "n0 n1 n2 n3 n4 n5 n6 n7"},
		{"paused moves nothing", paused, fleet(), 0, " waiting: the rollout is paused at 0 of 8 instances at revision 2"},
		{"paused: a new node takes the stable revision", paused, fleet(at("new", 0, "")), 0, " waiting: the rollout is paused at 0 of 8 instances at revision 2"},
		{"the first revision goes everywhere, paused or not", paused, []rolloutNode{at("a", 0, ""), at("b", 0, "")}, 0, "a b"},
		{"25% of 8 by default: two nodes", rolling(nil, nil), fleet(), 0, "n0 n1 waiting: rolling update: 2 of 8 instances at revision 2; waiting for at most 2 of 8 instances unavailable"},
		{"a count", rolling(count(3), nil), fleet(), 0, "n0 n1 n2 waiting: rolling update: 3 of 8 instances at revision 2; waiting for at most 3 of 8 instances unavailable"},
		{"a percent rounds down, at least 1", rolling(percent("10%"), nil), fleet(), 0, "n0 waiting: rolling update: 1 of 8 instances at revision 2; waiting for at most 1 of 8 instances unavailable"},
		{"the wave in flight holds the next", rolling(count(2), nil), fleet(at("n0", 2, "deploying"), at("n1", 2, "deploying")), 0,
			"n0 n1 waiting: rolling update: 2 of 8 instances at revision 2; waiting for at most 2 of 8 instances unavailable"},
		{"a finished wave lets the next go", rolling(count(2), nil), fleet(at("n0", 2, "running"), at("n1", 2, "running")), 0,
			"n0 n1 n2 n3 waiting: rolling update: 4 of 8 instances at revision 2; waiting for at most 2 of 8 instances unavailable"},
		{"a node that runs nothing moves free", rolling(count(1), nil), fleet(at("n0", 1, "failed"), at("n1", 1, "deploying")), 0,
			"n0 n1 waiting: rolling update: 2 of 8 instances at revision 2; waiting for at most 1 of 8 instances unavailable"},
		{"failures at the new revision use up the budget", rolling(count(2), nil), fleet(at("n0", 2, "failed"), at("n1", 2, "failed")), 0,
			"n0 n1 waiting: rolling update: 2 of 8 instances at revision 2; waiting for at most 2 of 8 instances unavailable"},
		{"a node of more instances than the budget moves alone", rolling(count(1), nil),
			[]rolloutNode{{name: "big", revision: 1, instances: 3, available: 3}, at("small", 2, "running")}, 0, "big small"},
		{"a canary of one goes first", rolling(count(4), count(1)), fleet(), 0,
			"n0 waiting: rolling update: 1 of 8 instances at revision 2; waiting for a canary of 1 instances to run revision 2 first (0 do)"},
		{"the canary runs: the rest follows by the budget", rolling(count(4), count(1)), fleet(at("n0", 2, "running")), 0,
			"n0 n1 n2 n3 n4 waiting: rolling update: 5 of 8 instances at revision 2; waiting for at most 4 of 8 instances unavailable"},
		{"a canary percent rounds up", rolling(count(4), percent("20%")), fleet(), 0,
			"n0 n1 waiting: rolling update: 2 of 8 instances at revision 2; waiting for a canary of 2 instances to run revision 2 first (0 do)"},
		{"a new node waits at the stable revision during the canary", rolling(count(4), count(1)), fleet(at("n0", 2, "deploying"), at("new", 0, "")), 0,
			"n0 waiting: rolling update: 1 of 8 instances at revision 2; waiting for a canary of 1 instances to run revision 2 first (0 do)"},
		{"a failed canary stops the rollout", rolling(count(4), count(1)), fleet(at("n0", 2, "failed")), 0,
			"n0 stalled: CanaryFailed: 1 of the canary's 1 instances failed at revision 2; 0 of 8 instances run it, the rest stay at their revision"},
		{"a failed canary that is every node of the service stops it too", rolling(count(1), count(1)), []rolloutNode{at("only", 2, "failed")}, 0,
			"only stalled: CanaryFailed: 1 of the canary's 1 instances failed at revision 2; 0 of 1 instances run it, the rest stay at their revision"},
		{"a failure after the canary ran is no canary failure", rolling(count(1), count(1)), []rolloutNode{at("a", 2, "running"), at("b", 2, "failed")}, 0,
			"a b"},
		{"past the deadline nothing more moves", rolling(count(2), nil), fleet(at("n0", 2, "failed"), at("n1", 2, "running")), 10 * time.Minute,
			"n0 n1 stalled: ProgressDeadlineExceeded: no instance newly ran revision 2 for 10m0s (progressDeadlineSeconds): 1 of 8 instances run it, 1 failed, 6 at earlier revisions"},
		{"past the deadline all at once too", edgev1alpha1.EdgeServiceSpec{}, []rolloutNode{at("a", 2, "deploying")}, time.Minute,
			"a stalled: ProgressDeadlineExceeded: no instance newly ran revision 2 for 1m0s (progressDeadlineSeconds): 0 of 1 instances run it, 0 failed, 0 at earlier revisions"},
		{"an agent that predates assignments moves at once", rolling(count(1), nil),
			[]rolloutNode{{name: "old", revision: 1, instances: 1, available: 1, legacy: true}, at("a", 1, "running"), at("b", 1, "running")}, 0,
			"a old waiting: rolling update: 2 of 3 instances at revision 2; waiting for at most 1 of 3 instances unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := planRollout(&tc.spec, 2, tc.nodes, tc.exceeded, false)
			got := strings.Join(slices.Sorted(maps.Keys(plan.current)), " ")
			if plan.waiting != "" {
				got += " waiting: " + plan.waiting
			}
			if plan.stalled != nil {
				got += " stalled: " + plan.stalled.Reason + ": " + plan.stalled.Message
			}
			if got != tc.want {
				t.Fatalf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	// Once the revision ran everywhere, its canary is behind it: a
	// failure now (here beside a node added by a scale) is no canary's,
	// and nothing is rolled back for it.
	spec := rolling(count(1), count(1))
	if plan := planRollout(&spec, 2, []rolloutNode{at("a", 2, "failed"), at("new", 0, "")}, 0, true); plan.stalled != nil || !plan.current["new"] {
		t.Fatalf("after the rollout: stalled %+v, current %v", plan.stalled, plan.current)
	}
	if plan := planRollout(&spec, 2, []rolloutNode{at("a", 2, "failed"), at("new", 0, "")}, 0, false); plan.stalled == nil {
		t.Fatal("during the rollout: a failed canary does not stall it")
	}
}

// The progress deadline on a fake clock: it counts from the rollout's
// start and from each instance newly at the current revision, stops while
// paused, starts again on resume, and ends once the revision ran
// everywhere.
func TestRolloutDeadline(t *testing.T) {
	svc := &edgev1alpha1.EdgeService{}
	svc.Spec.ProgressDeadlineSeconds = ptr.To(int32(60))
	svc.Status = edgev1alpha1.EdgeServiceStatus{Revision: 1, DeployedRevision: 1, ReadyReplicas: 2}
	insts := []edgev1alpha1.ServiceInstance{{TaskID: "a", NodeName: "n1", Revision: 1}, {TaskID: "b", NodeName: "n2", Revision: 1}}
	current := &edgev1alpha1.DeployRecord{Spec: edgev1alpha1.DeployRecordSpec{Revision: 2}}
	running := func(tasks ...string) map[string]*edgev1alpha1.EdgeNode {
		out := map[string]*edgev1alpha1.EdgeNode{"n1": {}, "n2": {}}
		for _, inst := range insts {
			if slices.Contains(tasks, inst.TaskID) {
				out[inst.NodeName].Status.Containers = []edgev1alpha1.ObservedContainer{{TaskID: inst.TaskID, Revision: 2, State: edgev1alpha1.ContainerRunning}}
			}
		}
		return out
	}
	entries := map[string]edgev1alpha1.AssignedService{"n1": {Revision: 2}, "n2": {Revision: 2}}
	step := func(at time.Duration, nodes map[string]*edgev1alpha1.EdgeNode) rollout {
		t.Helper()
		ro := rolloutOf(svc, insts, entries, nodes, current, nil, t0.Add(at))
		st, _ := desiredStatus(svc, placement{instances: insts, desired: 2}, nodes, current, ro, t0.Add(at))
		svc.Status = *st
		return ro
	}
	stalled := func() string {
		if c := meta.FindStatusCondition(svc.Status.Conditions, "Stalled"); c != nil {
			return c.Reason
		}
		return ""
	}

	ro := step(0, running())
	if !svc.Status.ProgressTime.Time.Equal(t0) || ro.recheckIn != time.Minute || stalled() != "" {
		t.Fatalf("at the start: progress %v, recheck in %v, stalled %q", svc.Status.ProgressTime, ro.recheckIn, stalled())
	}
	step(50*time.Second, running("a"))
	if !svc.Status.ProgressTime.Time.Equal(t0.Add(50*time.Second)) || stalled() != "" {
		t.Fatalf("one instance newly ran it: progress %v, stalled %q", svc.Status.ProgressTime, stalled())
	}
	if ro = step(109*time.Second, running("a")); ro.recheckIn != time.Second || stalled() != "" {
		t.Fatalf("a second before the deadline: recheck in %v, stalled %q", ro.recheckIn, stalled())
	}
	step(110*time.Second, running("a"))
	if stalled() != edgev1alpha1.ReasonProgressDeadlineExceeded {
		t.Fatalf("at the deadline: stalled %q, want ProgressDeadlineExceeded", stalled())
	}
	svc.Spec.Paused = true
	step(200*time.Second, running("a"))
	if c := meta.FindStatusCondition(svc.Status.Conditions, edgev1alpha1.ConditionProgressing); stalled() != "" || c.Reason != edgev1alpha1.ReasonDeploying {
		t.Fatalf("paused: stalled %q, Progressing %s", stalled(), c.Reason)
	}
	svc.Spec.Paused = false
	svc.Status.Conditions = conditions.Set(svc.Status.Conditions, t0, 0, edgev1alpha1.ConditionProgressing, metav1.ConditionUnknown, edgev1alpha1.ReasonRolloutPaused, "")
	step(300*time.Second, running("a"))
	if !svc.Status.ProgressTime.Time.Equal(t0.Add(300*time.Second)) || stalled() != "" {
		t.Fatalf("resumed: progress %v, stalled %q", svc.Status.ProgressTime, stalled())
	}
	if step(1000*time.Second, running("a", "b")); svc.Status.DeployedRevision != 2 || stalled() != "" {
		t.Fatalf("done: deployed %d, stalled %q", svc.Status.DeployedRevision, stalled())
	}
	if ro = step(1001*time.Second, running("a", "b")); ro.recheckIn != 0 {
		t.Fatalf("done: recheck in %v, want no deadline", ro.recheckIn)
	}
	if ro = step(5000*time.Second, running("a")); ro.stalled != nil || ro.recheckIn != 0 {
		t.Fatalf("an instance down after the rollout is no stalled rollout: %+v", ro.stalled)
	}
}

// Which record autoRollback returns to, and why none: a table over the
// pure rollbackTarget.
func TestRollbackTarget(t *testing.T) {
	svc := func(revision, deployed int64) *edgev1alpha1.EdgeService {
		return &edgev1alpha1.EdgeService{
			Spec:   edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@v3#linux"}, Policy: edgev1alpha1.PolicyStatic}, Nodes: []string{"a", "b", "c"}},
			Status: edgev1alpha1.EdgeServiceStatus{Revision: revision, DeployedRevision: deployed},
		}
	}
	rec := func(revision int64, omitted int32) edgev1alpha1.DeployRecord {
		return edgev1alpha1.DeployRecord{Spec: edgev1alpha1.DeployRecordSpec{Revision: revision, NodesOmitted: omitted,
			DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: edgev1alpha1.ImageRef(fmt.Sprintf("app@v%d#linux", revision))}, Policy: edgev1alpha1.PolicyStatic},
			Nodes:      []edgev1alpha1.RecordNode{{NodeName: "a"}, {NodeName: "b"}}}}
	}
	for _, tc := range []struct {
		name    string
		svc     *edgev1alpha1.EdgeService
		recs    []edgev1alpha1.DeployRecord
		want    int64 // the target's revision; 0 for none
		because string
		current int64 // the revision being rolled out, when the status names an older one
	}{
		{"the last revision that ran everywhere", svc(3, 2), []edgev1alpha1.DeployRecord{rec(1, 0), rec(2, 0), rec(3, 0)}, 2, "", 0},
		{"nothing ever ran everywhere", svc(3, 0), []edgev1alpha1.DeployRecord{rec(3, 0)}, 0, "no earlier revision", 0},
		{"the current revision ran everywhere", svc(3, 3), []edgev1alpha1.DeployRecord{rec(3, 0)}, 0, "no earlier revision", 0},
		{"its record was pruned or deleted", svc(3, 2), []edgev1alpha1.DeployRecord{rec(3, 0)}, 0, "is gone", 0},
		{"its record lists only some of its static nodes", svc(3, 2), []edgev1alpha1.DeployRecord{rec(2, 500), rec(3, 0)}, 0, "cannot be restored", 0},
		{"the status still names the revision before, its progress held", svc(2, 2), []edgev1alpha1.DeployRecord{rec(1, 0), rec(2, 0), rec(3, 0)}, 2, "", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			current := tc.svc.Status.Revision
			if tc.current != 0 {
				current = tc.current
			}
			got, why := rollbackTarget(tc.svc, current, tc.recs)
			switch {
			case tc.want == 0 && got != nil:
				t.Fatalf("got revision %d, want none", got.Spec.Revision)
			case tc.want != 0 && (got == nil || got.Spec.Revision != tc.want):
				t.Fatalf("got %v (%s), want revision %d", got, why, tc.want)
			case !strings.Contains(why, tc.because) || (tc.because == "") != (why == ""):
				t.Fatalf("why %q, want it to say %q", why, tc.because)
			}
		})
	}
}
