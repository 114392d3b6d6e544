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

package soak

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

func spec(env string, paused bool) *edgev1alpha1.EdgeServiceSpec {
	return &edgev1alpha1.EdgeServiceSpec{
		DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1#linux"}, Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To[int32](2),
			Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{env}}}},
		Paused: paused,
	}
}

func TestConfigHash(t *testing.T) {
	if ConfigHash(spec("A=1", false)) != ConfigHash(spec("A=1", true)) {
		t.Error("pausing a rollout changes the configuration's hash; it appends no record")
	}
	if ConfigHash(spec("A=1", false)) == ConfigHash(spec("A=2", false)) {
		t.Error("an edit of the environment keeps the configuration's hash")
	}
}

func TestLedgerCheck(t *testing.T) {
	a, b, c := ConfigHash(spec("A=1", false)), ConfigHash(spec("A=2", false)), ConfigHash(spec("A=3", false))
	type version struct {
		gen     int64
		hash    string
		records int
	}
	tests := []struct {
		name                string
		versions            []version
		missing, duplicates int
	}{
		{"each change recorded once", []version{{1, a, 1}, {2, b, 1}, {3, c, 1}}, 0, 0},
		{"a pause (same configuration) is not recorded", []version{{1, a, 1}, {2, a, 0}, {3, b, 1}}, 0, 0},
		{"back to an earlier configuration is a change", []version{{1, a, 1}, {2, b, 1}, {3, a, 1}}, 0, 0},
		{"a change superseded before it was recorded", []version{{1, a, 1}, {2, b, 0}, {3, c, 1}}, 1, 0},
		{"a change recorded twice", []version{{1, a, 1}, {2, b, 2}}, 0, 1},
		{"a pause recorded", []version{{1, a, 1}, {2, a, 1}}, 0, 1},
		{"records of versions the watch never delivered are not judged", nil, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger()
			svc := types.UID("svc-uid")
			// Records come before or after the versions; order is not
			// what the check reads.
			for i, v := range tc.versions {
				for r := range v.records {
					l.Recorded(svc, v.gen, types.UID(string(rune('a'+i))+string(rune('0'+r))))
				}
				l.Delivered(svc, "svc", v.gen, v.hash)
			}
			if tc.versions == nil {
				l.Recorded(svc, 7, "r")
			}
			// A second service alongside changes nothing.
			l.Delivered("other", "other", 1, a)
			l.Recorded("other", 1, "o1")
			l.Recorded("other", 1, "o1") // the same record seen twice
			missing, duplicates, notes := l.Check()
			if missing != tc.missing || duplicates != tc.duplicates {
				t.Errorf("Check = %d missing, %d duplicates (%v); want %d, %d", missing, duplicates, notes, tc.missing, tc.duplicates)
			}
			if missing+duplicates > 0 && len(notes) == 0 {
				t.Error("no note says which")
			}
		})
	}
}

func service(name string, limit int32, settled bool) edgev1alpha1.EdgeService {
	s := edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Generation: 4}}
	s.Spec.RevisionHistoryLimit = ptr.To(limit)
	s.Status = edgev1alpha1.EdgeServiceStatus{ObservedGeneration: 4, Revision: 3, DeployedRevision: 3, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2}
	if !settled {
		s.Status.DeployedRevision, s.Status.UpdatedReplicas = 2, 1 // a rollout in waves under way
	}
	return s
}

func TestSettled(t *testing.T) {
	settled := service("a", 3, true)
	paused := service("b", 3, true)
	paused.Spec.Paused = true
	behind := service("c", 3, true)
	behind.Generation = 5
	rolling := service("d", 3, false)
	for _, tc := range []struct {
		s    edgev1alpha1.EdgeService
		want bool
	}{{settled, true}, {paused, false}, {behind, false}, {rolling, false}} {
		if got := Settled(&tc.s); got != tc.want {
			t.Errorf("Settled(%s) = %v; want %v", tc.s.Name, got, tc.want)
		}
	}
	if got := HistoryLimit(&edgev1alpha1.EdgeService{}); got != 10 {
		t.Errorf("the schema's default revisionHistoryLimit is 10, not %d", got)
	}
}

func TestOverLimitAndLimitWatch(t *testing.T) {
	services := []edgev1alpha1.EdgeService{service("within", 3, true), service("over", 3, true), service("rolling", 3, false), service("default", 0, true)}
	services[3].Spec.RevisionHistoryLimit = nil
	counts := map[types.UID]int{"within": 3, "over": 4, "rolling": 6, "default": 10}
	over := OverLimit(services, counts)
	if len(over) != 1 || over["over"] == "" {
		t.Fatalf("OverLimit = %v; want only the settled service with 4 records of 3", over)
	}

	var w LimitWatch
	w.Observe(over)
	if len(w.Over()) != 0 {
		t.Errorf("over its limit in one sample only is the moment between recording and pruning, not a failure: %v", w.Over())
	}
	w.Observe(map[types.UID]string{})
	w.Observe(over)
	if len(w.Over()) != 0 {
		t.Errorf("over in two samples not in a row: %v", w.Over())
	}
	w.Observe(over)
	if len(w.Over()) != 1 {
		t.Errorf("over in two samples in a row is over for good: %v", w.Over())
	}
	w.Observe(map[types.UID]string{})
	if len(w.Over()) != 1 {
		t.Errorf("a service found over stays counted: %v", w.Over())
	}
}

func TestRecordBound(t *testing.T) {
	dflt := service("default", 0, true)
	dflt.Spec.RevisionHistoryLimit = nil
	for _, tc := range []struct {
		name     string
		services []edgev1alpha1.EdgeService
		want     int
	}{
		{"none", nil, 0},
		{"settled services hold their limits", []edgev1alpha1.EdgeService{service("a", 3, true), service("b", 5, true)}, 8},
		{"the schema's default limit", []edgev1alpha1.EdgeService{dflt}, 10},
		{"a rollout under way keeps two more", []edgev1alpha1.EdgeService{service("a", 3, true), service("rolling", 3, false)}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RecordBound(tc.services); got != tc.want {
				t.Errorf("RecordBound = %d; want %d", got, tc.want)
			}
		})
	}
}
