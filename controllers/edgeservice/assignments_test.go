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
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// The writes that bring each node's entry to what it should be: none
// where the cache and this process's intent agree with it, whatever the
// values' representation.
func TestAssignmentWrites(t *testing.T) {
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	entry := func(image string) edgev1alpha1.AssignedService {
		e := edgev1alpha1.AssignedService{UID: "u", Revision: 1}
		e.Spec.Image.Ref = edgev1alpha1.ImageRef(image)
		e.Instances = []edgev1alpha1.AssignedInstance{{TaskID: "t", Name: "n", Revision: 1, TaskCreatedTime: metav1.NewMicroTime(at)}}
		return e
	}
	// The same instant in another location, as a decoded time may be:
	// semantically equal, not equal field by field.
	elsewhere := entry("app@1#linux")
	elsewhere.Instances[0].TaskCreatedTime = metav1.NewMicroTime(at.In(time.FixedZone("UTC+8", 8*3600)))
	// Nil and empty lists are semantically equal too.
	empty := entry("app@1#linux")
	empty.Spec.Cmd = []string{}

	type entries = map[string]edgev1alpha1.AssignedService
	for _, tc := range []struct {
		name             string
		have, prev, want entries
		writes, removes  []string
	}{
		{"all agree", entries{"a": entry("app@1#linux")}, nil, entries{"a": entry("app@1#linux")}, nil, nil},
		{"equal but for a time's location", entries{"a": elsewhere}, nil, entries{"a": entry("app@1#linux")}, nil, nil},
		{"equal but for an empty list", entries{"a": empty}, nil, entries{"a": entry("app@1#linux")}, nil, nil},
		{"not in the cache", nil, nil, entries{"a": entry("app@1#linux")}, []string{"a"}, nil},
		{"changed", entries{"a": entry("app@1#linux")}, nil, entries{"a": entry("app@2#linux")}, []string{"a"}, nil},
		{"the cache agrees, an intent still queued does not: it must be followed",
			entries{"a": entry("app@1#linux")}, entries{"a": entry("app@2#linux")}, entries{"a": entry("app@1#linux")}, []string{"a"}, nil},
		{"gone from want: taken out where the cache or the intent has it",
			entries{"a": entry("app@1#linux")}, entries{"b": entry("app@1#linux")}, entries{}, nil, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := assignmentWrites(tc.have, tc.prev, tc.want)
			var writes, removes []string
			for _, node := range slices.Sorted(maps.Keys(got)) {
				if got[node] == nil {
					removes = append(removes, node)
				} else {
					writes = append(writes, node)
				}
			}
			if !slices.Equal(writes, tc.writes) || !slices.Equal(removes, tc.removes) {
				t.Errorf("writes %v, removes %v; want %v, %v", writes, removes, tc.writes, tc.removes)
			}
		})
	}
}
