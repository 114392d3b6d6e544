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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func TestCreationOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(name string, sec int) *edgev1alpha1.EdgeNode {
		return &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(sec) * time.Second))}}
	}
	o := &creationOrder{}
	h := orderHandler[*edgev1alpha1.EdgeNode](o, nil)
	// Out of order, a tie on time, an update that changes nothing, a delete.
	for _, n := range []*edgev1alpha1.EdgeNode{at("c", 2), at("Edge-B", 1), at("a", 1), at("gone", 0), at("d", 3)} {
		h.OnAdd(n, false)
	}
	h.OnUpdate(at("a", 1), at("a", 1))
	h.OnDelete(at("gone", 0))
	for _, tc := range []struct {
		filter      string
		start, size int
		want        string
	}{
		{"", 0, -1, "[Edge-B a c d] 4"},
		{"", 0, 2, "[Edge-B a] 4"},
		{"", 2, 2, "[c d] 4"},
		{"", 4, 2, "[] 4"},
		{"", 10, 2, "[] 4"},
		{"edge-b", 0, 10, "[Edge-B] 1"},
		{"d", 0, 10, "[Edge-B d] 2"},
		{"d", 1, 1, "[d] 2"},
		{"zzz", 0, 10, "[] 0"},
	} {
		names, total := o.page(tc.filter, tc.start, tc.size)
		if got := fmt.Sprint(names, " ", total); got != tc.want && !(tc.want[:2] == "[]" && got == fmt.Sprint([]string(nil), " ", total)) {
			t.Errorf("page(%q, %d, %d) = %s, want %s", tc.filter, tc.start, tc.size, got, tc.want)
		}
	}
}
