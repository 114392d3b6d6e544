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
	"testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestNodeLoad(t *testing.T) {
	on := func(nodes ...string) []edgev1alpha1.ServiceInstance {
		var out []edgev1alpha1.ServiceInstance
		for _, n := range nodes {
			out = append(out, edgev1alpha1.ServiceInstance{NodeName: n})
		}
		return out
	}
	l := newNodeLoad()
	for _, step := range []struct {
		name string
		do   func()
		want map[string]int
	}{
		{"two services placed", func() { l.set("s1", on("a", "b")); l.set("s2", on("a")) }, map[string]int{"a": 2, "b": 1}},
		{"the same status again counts once", func() { l.set("s1", on("a", "b")) }, map[string]int{"a": 2, "b": 1}},
		{"an instance moves", func() { l.set("s1", on("a", "c")) }, map[string]int{"a": 2, "c": 1}},
		{"two instances of one service on one node", func() { l.set("s2", on("c", "c")) }, map[string]int{"a": 1, "c": 3}},
		{"no instances left", func() { l.set("s1", nil) }, map[string]int{"c": 2}},
		{"one node's part from an assignment", func() { l.setNode("s2", "d", 2) }, map[string]int{"c": 2, "d": 2}},
		{"the same part again counts once", func() { l.setNode("s2", "d", 2) }, map[string]int{"c": 2, "d": 2}},
		{"a node's part taken out", func() { l.setNode("s2", "c", 0) }, map[string]int{"d": 2}},
		{"a part of a service never set", func() { l.setNode("s3", "a", 1) }, map[string]int{"a": 1, "d": 2}},
		{"a part set to nothing", func() { l.setNode("s3", "a", 0) }, map[string]int{"d": 2}},
		{"a deleted service", func() { l.drop("s2") }, map[string]int{}},
		{"a service never seen is dropped", func() { l.drop("s9") }, map[string]int{}},
	} {
		step.do()
		if !maps.Equal(l.count, step.want) {
			t.Fatalf("%s: counts %v, want %v", step.name, l.count, step.want)
		}
		for n, c := range step.want {
			if got := l.of(n); got != c {
				t.Fatalf("%s: of(%s) = %d, want %d", step.name, n, got, c)
			}
		}
	}
	if len(l.byService) != 0 {
		t.Fatalf("services still held after every one was emptied or dropped: %v", l.byService)
	}
	var none *nodeLoad
	none.set("s1", on("a"))
	none.drop("s1")
	if none.of("a") != 0 {
		t.Fatal("a nil load counts instances")
	}
}
