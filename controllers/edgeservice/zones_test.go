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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestDisruptedZones(t *testing.T) {
	node := func(name, zone string, state edgev1alpha1.NodeState) *edgev1alpha1.EdgeNode {
		n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if zone != "" {
			n.Labels = map[string]string{ZoneLabel: zone}
		}
		n.Status.Status = state
		return n
	}
	fleet := func(zone string, online, offline int) []*edgev1alpha1.EdgeNode {
		var out []*edgev1alpha1.EdgeNode
		for i := range online + offline {
			state := edgev1alpha1.NodeOnline
			if i < offline {
				state = edgev1alpha1.NodeOffline
			}
			out = append(out, node(fmt.Sprintf("%s-%d", zone, i), zone, state))
		}
		return out
	}
	recovering := func(name string) *edgev1alpha1.EdgeNode {
		n := node(name, "a", edgev1alpha1.NodeOnline)
		n.Status.Conditions = []metav1.Condition{{Type: edgev1alpha1.ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Second))}}
		return n
	}
	for _, tc := range []struct {
		name  string
		nodes [][]*edgev1alpha1.EdgeNode
		want  []string
	}{
		{"two offline nodes are failures, not a partition", [][]*edgev1alpha1.EdgeNode{fleet("a", 0, 2)}, nil},
		{"half of six is a partition", [][]*edgev1alpha1.EdgeNode{fleet("a", 3, 3)}, []string{"a"}},
		{"a third of nine is not", [][]*edgev1alpha1.EdgeNode{fleet("a", 6, 3)}, nil},
		{"zones count apart", [][]*edgev1alpha1.EdgeNode{fleet("a", 1, 3), fleet("b", 10, 0)}, []string{"a"}},
		{"nodes without a zone are one zone", [][]*edgev1alpha1.EdgeNode{fleet("", 2, 4)}, []string{""}},
		{"nodes back online for less than the settle time still count", [][]*edgev1alpha1.EdgeNode{fleet("a", 3, 1), {recovering("a-r1"), recovering("a-r2")}}, []string{"a"}},
		{"a whole fleet offline is a partition", [][]*edgev1alpha1.EdgeNode{fleet("a", 0, 5), fleet("b", 0, 5)}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(disruptedZones(slices.Concat(tc.nodes...), time.Now(), time.Minute)))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Fatalf("disrupted zones = %q, want %q", got, tc.want)
			}
		})
	}
}
