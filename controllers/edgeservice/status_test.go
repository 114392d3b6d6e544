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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// The deploy status of an instance, from what its agent reports: a table
// over the pure follow, no API server.
func TestFollow(t *testing.T) {
	inst := edgev1alpha1.ServiceInstance{TaskID: "t1", NodeName: "n1", Revision: 2, DeployNum: 2, DeployStatus: edgev1alpha1.DeploySuccess}
	report := func(c ...edgev1alpha1.ObservedContainer) map[string]*edgev1alpha1.EdgeNode {
		n := &edgev1alpha1.EdgeNode{}
		n.Status.Containers = c
		return map[string]*edgev1alpha1.EdgeNode{"n1": n}
	}
	obs := func(rev int64, state edgev1alpha1.ContainerState, failed string) edgev1alpha1.ObservedContainer {
		return edgev1alpha1.ObservedContainer{Name: "c", TaskID: "t1", Revision: rev, State: state, FailedMessage: failed}
	}
	started := func(c edgev1alpha1.ObservedContainer) edgev1alpha1.ObservedContainer {
		c.StartedTime = &metav1.Time{Time: t0}
		return c
	}
	for _, tc := range []struct {
		name   string
		action edgev1alpha1.DeployAction
		rev    int64
		nodes  map[string]*edgev1alpha1.EdgeNode
		want   string
	}{
		{"a new revision redeploys and counts it", "", 3, report(obs(2, edgev1alpha1.ContainerRunning, "")), "3/3/deploying/"},
		{"running at the revision succeeds", "", 3, report(obs(3, edgev1alpha1.ContainerRunning, "")), "3/3/success/"},
		{"a failure at the revision fails with the agent's message", "", 3, report(obs(3, edgev1alpha1.ContainerExited, "no image")), "3/3/failure/no image"},
		{"exiting after it started stays success", "", 2, report(started(obs(2, edgev1alpha1.ContainerExited, ""))), "2/2/success/"},
		{"created and never started is deploying", "", 2, report(obs(2, edgev1alpha1.ContainerCreated, "")), "2/2/deploying/"},
		{"a loaded image succeeds once created", edgev1alpha1.ActionLoad, 3, report(obs(3, edgev1alpha1.ContainerCreated, "")), "3/3/success/"},
		{"no report keeps it deploying", "", 3, nil, "3/3/deploying/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &edgev1alpha1.EdgeService{}
			svc.Spec.Action = tc.action
			out := follow(svc, []edgev1alpha1.ServiceInstance{inst}, tc.nodes, map[string]nodeRevision{"n1": {revision: tc.rev}})
			got := fmt.Sprintf("%d/%d/%s/%s", out[0].Revision, out[0].DeployNum, out[0].DeployStatus, out[0].FailedMessage)
			if got != tc.want {
				t.Fatalf("revision/deployNum/status/message = %s, want %s", got, tc.want)
			}
		})
	}
}

// The service's conditions from its instances and placement.
func TestServiceConditions(t *testing.T) {
	inst := func(status edgev1alpha1.DeployStatus) edgev1alpha1.ServiceInstance {
		return edgev1alpha1.ServiceInstance{Name: "i", NodeName: "n", Revision: 3, DeployStatus: status, FailedMessage: map[bool]string{true: "boom"}[status == edgev1alpha1.DeployFailure]}
	}
	for _, tc := range []struct {
		name      string
		desired   int32
		instances []edgev1alpha1.ServiceInstance
		problems  []string
		want      string // Available/Progressing/Degraded reasons, then Ready
		deployed  int64  // deployedRevision, 2 before, at revision 3
	}{
		{"no instances", 0, nil, nil, "NoInstances/RolloutComplete/AsExpected Ready=False", 2},
		{"rolling out", 2, []edgev1alpha1.ServiceInstance{inst(edgev1alpha1.DeploySuccess), inst(edgev1alpha1.DeployDeploying)}, nil,
			"InstancesNotReady/Deploying/AsExpected Ready=False", 2},
		{"all ready", 2, []edgev1alpha1.ServiceInstance{inst(edgev1alpha1.DeploySuccess), inst(edgev1alpha1.DeploySuccess)}, nil,
			"AllInstancesReady/RolloutComplete/AsExpected Ready=True", 3},
		{"one failed", 2, []edgev1alpha1.ServiceInstance{inst(edgev1alpha1.DeploySuccess), inst(edgev1alpha1.DeployFailure)}, nil,
			"InstancesNotReady/RolloutComplete/DeployFailed Ready=False", 2},
		{"cannot place", 2, []edgev1alpha1.ServiceInstance{inst(edgev1alpha1.DeploySuccess)}, []string{"node x does not exist"},
			"InstancesNotReady/RolloutComplete/PlacementFailed Ready=False", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
			st := &edgev1alpha1.EdgeServiceStatus{Revision: 3, DeployedRevision: 2}
			setServiceConditions(svc, st, tc.instances, placement{desired: tc.desired, problems: tc.problems}, rolloutPlan{}, "", t0)
			reason := func(typ string) string { return meta.FindStatusCondition(st.Conditions, typ).Reason }
			got := fmt.Sprintf("%s/%s/%s Ready=%s", reason(edgev1alpha1.ConditionAvailable), reason(edgev1alpha1.ConditionProgressing),
				reason(edgev1alpha1.ConditionDegraded), meta.FindStatusCondition(st.Conditions, edgev1alpha1.ConditionReady).Status)
			if got != tc.want {
				t.Fatalf("conditions = %s, want %s", got, tc.want)
			}
			if st.DeployedRevision != tc.deployed {
				t.Fatalf("deployedRevision = %d, want %d", st.DeployedRevision, tc.deployed)
			}
		})
	}
}

// A whole status at fake times, from a placement, the nodes' reports and
// the current record: a rollout of revision 2 that completes.
func TestDesiredStatus(t *testing.T) {
	svc := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 5}}
	svc.Status = edgev1alpha1.EdgeServiceStatus{ObservedGeneration: 4, Revision: 1, DeployedRevision: 1, CurrentRecord: "web-1"}
	insts := []edgev1alpha1.ServiceInstance{
		{TaskID: "a", Name: "web-a", NodeName: "n1", Revision: 1, DeployNum: 1, DeployStatus: edgev1alpha1.DeploySuccess},
		{TaskID: "b", Name: "web-b", NodeName: "n2", Revision: 1, DeployNum: 1, DeployStatus: edgev1alpha1.DeploySuccess},
	}
	current := &edgev1alpha1.DeployRecord{ObjectMeta: metav1.ObjectMeta{Name: "web-2"}, Spec: edgev1alpha1.DeployRecordSpec{Revision: 2}}
	nodesAt := func(rev int64) map[string]*edgev1alpha1.EdgeNode {
		out := map[string]*edgev1alpha1.EdgeNode{}
		for _, i := range insts {
			n := &edgev1alpha1.EdgeNode{}
			n.Status.Containers = []edgev1alpha1.ObservedContainer{{Name: i.Name, TaskID: i.TaskID, Revision: rev, State: edgev1alpha1.ContainerRunning}}
			out[i.NodeName] = n
		}
		return out
	}
	p := placement{instances: insts, desired: 2}

	// The spec changed at t0: the new revision goes out, nothing runs it yet.
	rolling, followed := desiredStatus(svc, p, nodesAt(1), current, rolloutOf(svc, p.instances, nil, nodesAt(1), current, nil, t0), t0)
	if rolling.ObservedGeneration != 5 || rolling.Revision != 2 || rolling.CurrentRecord != "web-2" || rolling.ReadyReplicas != 0 || rolling.DeployedRevision != 1 {
		t.Fatalf("rolling out: %+v", rolling)
	}
	if c := meta.FindStatusCondition(rolling.Conditions, edgev1alpha1.ConditionProgressing); c == nil || c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("rolling out: Progressing = %+v, want True since %v", c, t0)
	}

	// A minute later both agents report revision 2 running.
	svc.Status = *rolling
	p.instances = followed
	done, followed := desiredStatus(svc, p, nodesAt(2), current, rolloutOf(svc, p.instances, nil, nodesAt(2), current, nil, t0.Add(time.Minute)), t0.Add(time.Minute))
	if done.ReadyReplicas != 2 || done.DeployedRevision != 2 || followed[0].DeployNum != 2 {
		t.Fatalf("rolled out: %+v", done)
	}
	if c := meta.FindStatusCondition(done.Conditions, edgev1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Time.Equal(t0.Add(time.Minute)) {
		t.Fatalf("rolled out: Ready = %+v, want True since %v", c, t0.Add(time.Minute))
	}
	if meta.FindStatusCondition(done.Conditions, "Reconciling") != nil {
		t.Fatal("rolled out: Reconciling is still there")
	}
	// The input is left as it was: the function only computes.
	if svc.Status.ReadyReplicas != 0 {
		t.Fatal("desiredStatus changed the service it was given")
	}
}

// Placement of a dynamic service around an offline node, at fake times:
// kept within the grace period (with the recheck due when it ends), moved
// after it, kept however long when its zone looks partitioned.
func TestPlaceOffline(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	grace := 5 * time.Minute
	node := func(name, zone string, offlineSince time.Duration) *edgev1alpha1.EdgeNode {
		n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ZoneLabel: zone},
			CreationTimestamp: metav1.NewTime(now.Add(-24 * time.Hour))}}
		n.Spec.Type = "linux"
		n.Status.Status = edgev1alpha1.NodeOnline
		transition := now.Add(-time.Hour)
		if offlineSince > 0 {
			n.Status.Status = edgev1alpha1.NodeOffline
			transition = now.Add(-offlineSince)
		}
		n.Status.Conditions = []metav1.Condition{{Type: edgev1alpha1.ConditionReady, LastTransitionTime: metav1.NewTime(transition)}}
		return n
	}
	busy := func(n *edgev1alpha1.EdgeNode, managed int32) *edgev1alpha1.EdgeNode {
		n.Status.ContainerManagedTotal = managed
		return n
	}
	// engineDown is an online node whose agent reports its runtime
	// unreachable, and whose Ready went False that long ago.
	engineDown := func(name, zone string, since time.Duration) *edgev1alpha1.EdgeNode {
		n := node(name, zone, 0)
		n.Status.Conditions = []metav1.Condition{
			{Type: edgev1alpha1.ConditionReady, Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-since))},
			{Type: edgev1alpha1.ConditionRuntimeReady, Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-since))},
		}
		return n
	}
	svc := &edgev1alpha1.EdgeService{}
	svc.Spec.Image.Ref = "app@1#linux"
	svc.Spec.Policy = edgev1alpha1.PolicyDynamic
	svc.Spec.Factor = ptr.To[int32](1)
	svc.Status.Containers = []edgev1alpha1.ServiceInstance{{TaskID: "t1", NodeName: "a"}}
	r := &Reconciler{RescheduleGrace: grace}
	// Placement starts from the instance's node alone and reads every node
	// only when it must choose among them: wantEvery says whether it did.
	for _, tc := range []struct {
		name      string
		nodes     []*edgev1alpha1.EdgeNode
		wantNode  string
		wantCheck time.Duration
		wantEvery bool
	}{
		{"offline for a minute: kept, rechecked when the grace ends",
			[]*edgev1alpha1.EdgeNode{node("a", "z", time.Minute), node("b", "z", 0), node("c", "z", 0)}, "a", 4 * time.Minute, false},
		{"offline past the grace: moved to an online node",
			[]*edgev1alpha1.EdgeNode{node("a", "z", 6*time.Minute), node("b", "z", 0), node("c", "z", 0)}, "b", 0, true},
		{"offline past the grace in a partitioned zone: kept",
			[]*edgev1alpha1.EdgeNode{node("a", "z", 6*time.Minute), node("a2", "z", 6*time.Minute), node("a3", "z", 6*time.Minute),
				node("b", "z", 0), node("c", "z", 0)}, "a", 0, true},
		{"offline past the grace: moved to the first online node by name, whatever the order read",
			[]*edgev1alpha1.EdgeNode{node("a", "z", 6*time.Minute), node("c", "z", 0), node("b", "z", 0)}, "b", 0, true},
		{"offline past the grace: moved to the node with fewer managed containers",
			[]*edgev1alpha1.EdgeNode{node("a", "z", 6*time.Minute), busy(node("b", "z", 0), 3), busy(node("c", "z", 0), 1)}, "c", 0, true},
		{"runtime unreachable for a minute: kept, rechecked when the grace ends",
			[]*edgev1alpha1.EdgeNode{engineDown("a", "z", time.Minute), node("b", "z", 0)}, "a", 4 * time.Minute, false},
		{"runtime unreachable past the grace: moved to an available node",
			[]*edgev1alpha1.EdgeNode{engineDown("a", "z", 6*time.Minute), node("b", "z", 0)}, "b", 0, true},
		{"runtime unreachable past the grace in a zone that looks partitioned: moved all the same",
			[]*edgev1alpha1.EdgeNode{engineDown("a", "z", 6*time.Minute), node("a2", "z", 6*time.Minute), node("a3", "z", 6*time.Minute),
				node("a4", "z", 6*time.Minute), node("b", "z", 0)}, "b", 0, true},
		{"a new instance never goes to a node whose runtime is unreachable",
			[]*edgev1alpha1.EdgeNode{node("a", "z", 6*time.Minute), engineDown("b", "z", time.Second), node("c", "z", 0)}, "c", 0, true},
		{"online: kept without reading every node",
			[]*edgev1alpha1.EdgeNode{node("a", "z", 0), node("b", "z", 0)}, "a", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := map[string]*edgev1alpha1.EdgeNode{"a": tc.nodes[0]}
			every := 0
			p, err := r.place(svc, svc.Status.Containers, nodes, now, func() ([]*edgev1alpha1.EdgeNode, error) {
				every++
				return tc.nodes, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.instances) != 1 || p.instances[0].NodeName != tc.wantNode || p.recheckIn != tc.wantCheck {
				t.Fatalf("placed %+v, recheck in %s; want node %s, recheck in %s", p.instances, p.recheckIn, tc.wantNode, tc.wantCheck)
			}
			if every > 1 || (every == 1) != tc.wantEvery {
				t.Fatalf("read every node %d times; want it read: %v", every, tc.wantEvery)
			}
			// Status and records look the instance's node up there.
			if nodes[tc.wantNode] == nil {
				t.Fatalf("node %s of the instance is not among the reconcile's nodes", tc.wantNode)
			}
		})
	}

	// What is placed counts before the agents report it: a burst of new
	// services spreads at once.
	t.Run("moved to the node with fewer instances placed, not yet reported", func(t *testing.T) {
		r := &Reconciler{RescheduleGrace: grace, load: newNodeLoad()}
		r.load.set("other", []edgev1alpha1.ServiceInstance{{NodeName: "b"}})
		every := []*edgev1alpha1.EdgeNode{node("a", "z", 6*time.Minute), node("b", "z", 0), node("c", "z", 0)}
		p, err := r.place(svc, svc.Status.Containers, map[string]*edgev1alpha1.EdgeNode{"a": every[0]}, now, func() ([]*edgev1alpha1.EdgeNode, error) { return every, nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(p.instances) != 1 || p.instances[0].NodeName != "c" {
			t.Fatalf("placed %+v; want it on c, the node with nothing placed", p.instances)
		}
	})
}

func TestPullProgress(t *testing.T) {
	pull := func(node, image string, done, total int64, queued bool) instancePull {
		return instancePull{node: node, pull: edgev1alpha1.ImagePull{Image: image, BytesDone: done, BytesTotal: total, Queued: queued}}
	}
	for _, tc := range []struct {
		name  string
		pulls []instancePull
		want  string
	}{
		{"none", nil, ""},
		{"one", []instancePull{pull("edge-01", "reg/app:2", 3_200_000, 10_000_000, false)}, "pulling image reg/app:2 on node edge-01: 3.2 of 10.0 MB (32%)"},
		{"one, size not known yet", []instancePull{pull("edge-01", "reg/app:2", 0, 0, false)}, "pulling image reg/app:2 on node edge-01: 0.0 MB received"},
		{"one, queued", []instancePull{pull("edge-01", "reg/app:2", 0, 0, true)}, "image reg/app:2 waits for a pull slot on node edge-01"},
		{"several, summed", []instancePull{pull("a", "x:1", 1_000_000, 4_000_000, false), pull("b", "x:1", 3_000_000, 4_000_000, false), pull("c", "x:1", 0, 0, true)},
			"3 instances wait on image pulls: 4.0 of 8.0 MB (50%), 1 of them queued"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pullProgress(tc.pulls); got != tc.want {
				t.Fatalf("pullProgress = %q, want %q", got, tc.want)
			}
		})
	}
}

// t0 is the fake clock's time in the status and rollout tests.
var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
