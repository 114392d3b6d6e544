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
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// TestInstanceOrder follows services through add, update, move and delete
// and reads pages off the lists of one and of several services or nodes.
func TestInstanceOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// svc makes a service of instances "task@node@second".
	svc := func(uid, namespace string, instances ...string) *edgev1alpha1.EdgeService {
		s := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: namespace, UID: types.UID(uid)}}
		for _, in := range instances {
			var task, node string
			var sec int
			if _, err := fmt.Sscanf(strings.ReplaceAll(in, "@", " "), "%s %s %d", &task, &node, &sec); err != nil {
				t.Fatal(err)
			}
			s.Status.Containers = append(s.Status.Containers, edgev1alpha1.ServiceInstance{
				TaskID: task, NodeName: node, TaskCreatedTime: metav1.NewMicroTime(t0.Add(time.Duration(sec) * time.Second)),
			})
		}
		return s
	}
	o := newInstanceOrder(func(s *edgev1alpha1.EdgeService) bool { return s.Namespace == "edge" })
	h := o.handler()
	h.OnAdd(svc("a", "edge", "a1@n1@1", "a2@n2@5"), false)
	h.OnAdd(svc("b", "edge", "b1@n1@3", "b2@n1@3", "b3@n2@2"), false)
	h.OnAdd(svc("other", "elsewhere", "o1@n1@9"), false)
	h.OnAdd(svc("gone", "edge", "g1@n1@7"), false)
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "edge/gone", Obj: svc("gone", "edge", "g1@n1@7")})
	// a's instance on n2 moves to n3; a tie on time with b's is broken by taskId.
	h.OnUpdate(nil, svc("a", "edge", "a1@n1@1", "a3@n3@3"))

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
	h.OnDelete(svc("b", "edge"))
	if got := tasks(o.onNode("n1"), o.onNode("n2")); got != "a1" {
		t.Errorf("after b's delete: %q, want %q", got, "a1")
	}
	if len(o.byNode) != 2 || len(o.byService) != 1 {
		t.Errorf("lists left after deletes: %d nodes, %d services, want 2 and 1", len(o.byNode), len(o.byService))
	}
}
