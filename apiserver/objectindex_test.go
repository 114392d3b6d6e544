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
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestObjectIndex(t *testing.T) {
	svc := func(name string, nodes ...string) *edgev1alpha1.EdgeService {
		s := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		for _, n := range nodes {
			s.Status.Containers = append(s.Status.Containers, edgev1alpha1.ServiceInstance{NodeName: n})
		}
		return s
	}
	x := newObjectIndex(func(s *edgev1alpha1.EdgeService) []string {
		var out []string
		for _, inst := range s.Status.Containers {
			out = append(out, inst.NodeName)
		}
		return out
	}, nil)
	h := x.handler()
	names := func(key string) []string {
		var out []string
		for _, s := range x.get(key) {
			out = append(out, s.Name)
		}
		slices.Sort(out)
		return out
	}
	h.OnAdd(svc("a", "n1", "n2"), false)
	h.OnAdd(svc("b", "n1"), false)
	if got := names("n1"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("n1 = %v", got)
	}
	// An update moves a service between keys and serves the newest object.
	moved := svc("a", "n3")
	h.OnUpdate(svc("a", "n1", "n2"), moved)
	if got := names("n1"); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("n1 after the move = %v", got)
	}
	if got := names("n2"); len(got) != 0 {
		t.Fatalf("n2 after the move = %v", got)
	}
	if got := x.get("n3"); len(got) != 1 || got[0] != moved {
		t.Fatalf("n3 = %v, want the updated object itself", got)
	}
	// By name: the newest object, and nothing for another namespace.
	if got, ok := x.object("ns", "a"); !ok || got != moved {
		t.Fatalf("object(ns, a) = %v, %v; want the updated object", got, ok)
	}
	if _, ok := x.object("other", "a"); ok {
		t.Fatal("object(other, a) found a service of namespace ns")
	}
	// A delete seen only as a final state unknown still removes.
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/b", Obj: svc("b", "n1")})
	if got := names("n1"); len(got) != 0 {
		t.Fatalf("n1 after the delete = %v", got)
	}
	if _, ok := x.object("ns", "b"); ok {
		t.Fatal("object(ns, b) found a deleted service")
	}
	if len(x.byKey) != 1 || len(x.keyed) != 1 {
		t.Fatalf("the index keeps %d keys and %d objects, want 1 and 1", len(x.byKey), len(x.keyed))
	}
}

// TestObjectIndexOrder checks each key's objects stay in the index's
// order through adds, updates and deletes, and that a list handed out
// earlier never changes under its reader.
func TestObjectIndexOrder(t *testing.T) {
	rec := func(name string, revision int64) *edgev1alpha1.DeployRecord {
		return &edgev1alpha1.DeployRecord{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: edgev1alpha1.DeployRecordSpec{Revision: revision}}
	}
	x := newObjectIndex(func(*edgev1alpha1.DeployRecord) []string { return []string{"svc", "svc"} },
		func(a, b *edgev1alpha1.DeployRecord) int { return int(b.Spec.Revision - a.Spec.Revision) })
	h := x.handler()
	names := func(list []*edgev1alpha1.DeployRecord) string {
		var out []string
		for _, r := range list {
			out = append(out, r.Name)
		}
		return strings.Join(out, " ")
	}
	for _, r := range []*edgev1alpha1.DeployRecord{rec("r2", 2), rec("r5", 5), rec("r1", 1), rec("r3", 3)} {
		h.OnAdd(r, false)
	}
	before := x.get("svc")
	if got := names(before); got != "r5 r3 r2 r1" {
		t.Fatalf("order = %q, want newest first, each once", got)
	}
	h.OnUpdate(rec("r3", 3), rec("r3", 4))
	h.OnDelete(rec("r5", 5))
	h.OnAdd(rec("r9", 9), false)
	if got := names(x.get("svc")); got != "r9 r3 r2 r1" {
		t.Fatalf("order after update, delete and add = %q", got)
	}
	if got := names(before); got != "r5 r3 r2 r1" {
		t.Fatalf("a list handed out earlier changed under its reader: %q", got)
	}
}
