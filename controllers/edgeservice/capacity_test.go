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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestCapacityOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     *int32
		reported int32
		want     int
	}{
		{"neither says: the default", nil, 0, edgev1alpha1.DefaultMaxInstances},
		{"the agent's", nil, 20, 20},
		{"the spec overrides the agent", ptr.To[int32](5), 20, 5},
		{"the spec may hold nothing new", ptr.To[int32](0), 20, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &edgev1alpha1.EdgeNode{}
			n.Spec.MaxInstances = tc.spec
			if tc.reported > 0 {
				n.Status.NodeInfo = &edgev1alpha1.NodeInfo{MaxInstances: tc.reported}
			}
			if got := capacityOf(n); got != tc.want {
				t.Fatalf("capacity %d, want %d", got, tc.want)
			}
		})
	}
}

// Placement never puts more on a node than it holds, and says so when
// the fleet is full.
func TestPlaceWithinCapacity(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	node := func(name string, max, managed int32) *edgev1alpha1.EdgeNode {
		n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
		n.Spec.Type = "linux"
		n.Status.Status = edgev1alpha1.NodeOnline
		n.Status.NodeInfo = &edgev1alpha1.NodeInfo{Type: "linux", MaxInstances: max}
		n.Status.ContainerManagedTotal = managed
		return n
	}
	for _, tc := range []struct {
		name    string
		static  []string // the service is static on these nodes, else dynamic
		factor  int32
		nodes   []*edgev1alpha1.EdgeNode
		want    map[string]int
		problem string
	}{
		{"dynamic, room enough: spread", nil, 4, []*edgev1alpha1.EdgeNode{node("a", 3, 0), node("b", 3, 0)},
			map[string]int{"a": 2, "b": 2}, ""},
		{"dynamic, one node fills up: the rest go to the other", nil, 4, []*edgev1alpha1.EdgeNode{node("a", 1, 0), node("b", 5, 0)},
			map[string]int{"a": 1, "b": 3}, ""},
		{"dynamic, what the agent runs counts", nil, 3, []*edgev1alpha1.EdgeNode{node("a", 2, 2), node("b", 2, 0)},
			map[string]int{"b": 2}, "every online node that runs linux and matches nodeSelector is full (2 nodes, maxInstances 4 in all); 2 of 3 instances placed"},
		{"dynamic, factor above the fleet's capacity", nil, 10000, []*edgev1alpha1.EdgeNode{node("a", 3, 0), node("b", 2, 0)},
			map[string]int{"a": 3, "b": 2}, "(2 nodes, maxInstances 5 in all); 5 of 10000 instances placed"},
		{"static on a full node: refused with the numbers", []string{"a", "b"}, 0, []*edgev1alpha1.EdgeNode{node("a", 1, 1), node("b", 1, 0)},
			map[string]int{"b": 1}, "node a is full: 1 instances placed, maxInstances 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &edgev1alpha1.EdgeService{}
			svc.Spec.Image.Ref = "app@1#linux"
			if tc.static != nil {
				svc.Spec.Nodes = tc.static
			} else {
				svc.Spec.Policy, svc.Spec.Factor = edgev1alpha1.PolicyDynamic, ptr.To(tc.factor)
			}
			nodes := map[string]*edgev1alpha1.EdgeNode{}
			for _, n := range tc.nodes {
				nodes[n.Name] = n
			}
			r := &Reconciler{RescheduleGrace: time.Minute, load: newNodeLoad()}
			p, err := r.place(svc, svc.Status.Containers, nodes, now, func() ([]*edgev1alpha1.EdgeNode, error) { return tc.nodes, nil })
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, i := range p.instances {
				got[i.NodeName]++
			}
			if len(got) != len(tc.want) {
				t.Fatalf("placed %v, want %v", got, tc.want)
			}
			for n, c := range tc.want {
				if got[n] != c {
					t.Fatalf("placed %v, want %v", got, tc.want)
				}
			}
			joined := strings.Join(p.problems, "; ")
			if (tc.problem == "") != (joined == "") || !strings.Contains(joined, tc.problem) {
				t.Fatalf("problems %q, want %q", joined, tc.problem)
			}
		})
	}
}
