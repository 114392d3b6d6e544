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

package apiserver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// TestInstanceOrder follows the nodes' assignments as services are
// placed, moved and deleted, and reads pages off the lists of one and of
// several services or nodes.
func TestInstanceOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// services holds each service's instances "task@node@second", by
	// namespace/name; its UID is its name.
	services := map[string][]string{}
	// assignments are the nodes' assignments services make.
	assignments := func() map[string]*edgev1alpha1.NodeAssignment {
		out := map[string]*edgev1alpha1.NodeAssignment{}
		for _, n := range []string{"n1", "n2", "n3"} {
			out[n] = &edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: edgev1alpha1.NodeAssignmentSpec{Services: map[string]edgev1alpha1.AssignedService{}}}
		}
		for key, instances := range services {
			_, uid, _ := strings.Cut(key, "/")
			for _, in := range instances {
				var task, node string
				var sec int
				if _, err := fmt.Sscanf(strings.ReplaceAll(in, "@", " "), "%s %s %d", &task, &node, &sec); err != nil {
					t.Fatal(err)
				}
				e := out[node].Spec.Services[key]
				e.UID = uid
				e.Instances = append(e.Instances, edgev1alpha1.AssignedInstance{TaskID: task, TaskCreatedTime: metav1.NewMicroTime(t0.Add(time.Duration(sec) * time.Second))})
				out[node].Spec.Services[key] = e
			}
		}
		return out
	}
	o := newInstanceOrder(func(namespace string) bool { return namespace == "edge" })
	h := o.handler()
	// apply delivers every node's assignment as its informer would.
	apply := func() {
		for _, a := range assignments() {
			h.OnUpdate(nil, a)
		}
	}
	services["edge/a"] = []string{"a1@n1@1", "a2@n2@5"}
	services["edge/b"] = []string{"b1@n1@3", "b2@n1@3", "b3@n2@2"}
	services["elsewhere/other"] = []string{"o1@n1@9"}
	services["edge/gone"] = []string{"g1@n1@7"}
	for _, a := range assignments() {
		h.OnAdd(a, false)
	}
	delete(services, "edge/gone")
	apply()
	// a's instance on n2 moves to n3; a tie on time with b's is broken by taskId.
	services["edge/a"] = []string{"a1@n1@1", "a3@n3@3"}
	apply()

	tasks := func(lists ...[]instance) string {
		var out []string
		for in := range merged(lists) {
			out = append(out, in.inst.TaskID)
		}
		return strings.Join(out, " ")
	}
	for name, tc := range map[string]struct{ got, want string }{
		"one service":                  {tasks(o.ofService("a")), "a3 a1"},
		"two services merged":          {tasks(o.ofService("a"), o.ofService("b")), "a3 b1 b2 b3 a1"},
		"a node":                       {tasks(o.onNode("n1")), "b1 b2 a1"},
		"two nodes merged":             {tasks(o.onNode("n1"), o.onNode("n3")), "a3 b1 b2 a1"},
		"a node the move left":         {tasks(o.onNode("n2")), "b3"},
		"a deleted service":            {tasks(o.ofService("gone")), ""},
		"another namespace":            {tasks(o.ofService("other")), ""},
		"a node of no instance":        {tasks(o.onNode("n9")), ""},
		"no list at all":               {tasks(), ""},
		"an empty list among the rest": {tasks(nil, o.onNode("n2"), nil), "b3"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", name, tc.got, tc.want)
		}
	}
	delete(services, "edge/b")
	apply()
	if got := tasks(o.onNode("n1"), o.onNode("n2")); got != "a1" {
		t.Errorf("after b's delete: %q, want %q", got, "a1")
	}
	if len(o.byNode) != 2 || len(o.byService) != 1 {
		t.Errorf("lists left after deletes: %d nodes, %d services, want 2 and 1", len(o.byNode), len(o.byService))
	}
	// A deleted assignment takes its node's instances with it.
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "n3", Obj: assignments()["n3"]})
	if got := tasks(o.ofService("a")); got != "a1" {
		t.Errorf("after n3's assignment went: %q, want %q", got, "a1")
	}
}
