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

package enginecheck

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// The instances wanted are the node's, of the services given, each with
// its service's mark.
func TestWanted(t *testing.T) {
	svc := func(name, env string) edgev1alpha1.EdgeService {
		return edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{
				Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{env}}}}}}
	}
	placed := &edgev1alpha1.NodeAssignment{Spec: edgev1alpha1.NodeAssignmentSpec{Services: map[string]edgev1alpha1.AssignedService{
		"default/a":     {Instances: []edgev1alpha1.AssignedInstance{{TaskID: "t1", Revision: 3}}},
		"default/b":     {Instances: []edgev1alpha1.AssignedInstance{{TaskID: "t2", Revision: 1}, {TaskID: "t3", Revision: 2}}},
		"default/other": {Instances: []edgev1alpha1.AssignedInstance{{TaskID: "t4", Revision: 1}}},
	}}}
	mark := func(s *edgev1alpha1.EdgeService) string { return s.Spec.Config.Linux.Env[0] }
	got := Wanted(placed, []edgev1alpha1.EdgeService{svc("a", "CHANGE=7"), svc("b", "CHANGE=2"), svc("c", "CHANGE=1")}, mark)
	want := map[string]Want{
		"t1": {Service: "a", Revision: 3, Env: "CHANGE=7"},
		"t2": {Service: "b", Revision: 1, Env: "CHANGE=2"},
		"t3": {Service: "b", Revision: 2, Env: "CHANGE=2"},
	}
	if len(got) != len(want) {
		t.Fatalf("Wanted = %v; want %v", got, want)
	}
	for task, w := range want {
		if got[task] != w {
			t.Errorf("Wanted[%s] = %+v; want %+v", task, got[task], w)
		}
	}
	if got := Wanted(&edgev1alpha1.NodeAssignment{}, []edgev1alpha1.EdgeService{svc("a", "CHANGE=1")}, mark); len(got) != 0 {
		t.Errorf("a node with no assignment wants nothing; got %v", got)
	}
}

func TestJudge(t *testing.T) {
	want := map[string]Want{
		"t1": {Service: "a", Revision: 3, Env: "CHANGE=7"},
		"t2": {Service: "b", Revision: 1, Env: "CHANGE=2"},
	}
	running := func(env ...string) Inspected {
		return Inspected{Running: true, Env: append([]string{"PATH=/bin"}, env...)}
	}
	tests := []struct {
		name                      string
		list                      []Container
		inspected                 map[string]Inspected
		orphans, duplicates, lost int
		notes                     []string
	}{
		{name: "one running container per instance at its revision and change",
			list:      []Container{{ID: "c1", Task: "t1", Revision: "3"}, {ID: "c2", Task: "t2", Revision: "1"}},
			inspected: map[string]Inspected{"c1": running("CHANGE=7"), "c2": running("CHANGE=2")}},
		{name: "a container of no instance",
			list:      []Container{{ID: "c1", Task: "t1", Revision: "3"}, {ID: "c2", Task: "t2", Revision: "1"}, {ID: "0123456789abcdef", Names: []string{"/x"}, Task: "t9", Revision: "1"}},
			inspected: map[string]Inspected{"c1": running("CHANGE=7"), "c2": running("CHANGE=2")},
			orphans:   1, notes: []string{"orphan: container 0123456789ab [/x] of no current instance"}},
		{name: "a container of an old revision is an orphan, and the instance has none",
			list:      []Container{{ID: "c1", Task: "t1", Revision: "2"}, {ID: "c2", Task: "t2", Revision: "1"}},
			inspected: map[string]Inspected{"c2": running("CHANGE=2")},
			orphans:   1, lost: 1,
			notes: []string{"orphan: container c1 [] of no current instance", "a: instance t1 has no container"}},
		{name: "two containers of one instance",
			list:       []Container{{ID: "c1", Task: "t1", Revision: "3"}, {ID: "c3", Task: "t1", Revision: "3"}, {ID: "c2", Task: "t2", Revision: "1"}},
			inspected:  map[string]Inspected{"c1": running("CHANGE=7"), "c2": running("CHANGE=2")},
			duplicates: 1, notes: []string{"duplicate: container c3 [] of instance t1"}},
		{name: "a container at an older change",
			list:      []Container{{ID: "c1", Task: "t1", Revision: "3"}, {ID: "c2", Task: "t2", Revision: "1"}},
			inspected: map[string]Inspected{"c1": running("CHANGE=6"), "c2": running("CHANGE=2")},
			lost:      1, notes: []string{"a: the engine runs [PATH=/bin CHANGE=6] (running true), not CHANGE=7"}},
		{name: "a container stopped",
			list:      []Container{{ID: "c1", Task: "t1", Revision: "3"}, {ID: "c2", Task: "t2", Revision: "1"}},
			inspected: map[string]Inspected{"c1": {Env: []string{"CHANGE=7"}}, "c2": running("CHANGE=2")},
			lost:      1, notes: []string{"a: the engine runs [CHANGE=7] (running false), not CHANGE=7"}},
		{name: "no container at all",
			lost:  2,
			notes: []string{"a: instance t1 has no container", "b: instance t2 has no container"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			rep, err := Judge(want, tc.list, func(id string) (Inspected, error) {
				asked = append(asked, id)
				got, ok := tc.inspected[id]
				if !ok {
					t.Errorf("inspected %s, which is no instance's first container at its revision", id)
				}
				return got, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Orphans != tc.orphans || rep.Duplicates != tc.duplicates || rep.Lost != tc.lost {
				t.Errorf("orphans, duplicates, lost = %d, %d, %d; want %d, %d, %d", rep.Orphans, rep.Duplicates, rep.Lost, tc.orphans, tc.duplicates, tc.lost)
			}
			if rep.Mismatches() != tc.orphans+tc.duplicates+tc.lost {
				t.Errorf("Mismatches() = %d; want the sum", rep.Mismatches())
			}
			if !slices.Equal(rep.Notes, tc.notes) {
				t.Errorf("notes = %q; want %q", rep.Notes, tc.notes)
			}
		})
	}
}

// An engine that fails an inspection fails the check.
func TestJudgeInspectError(t *testing.T) {
	boom := errors.New("engine gone")
	_, err := Judge(map[string]Want{"t1": {Service: "a", Revision: 1, Env: "CHANGE=1"}}, []Container{{ID: "c1", Task: "t1", Revision: "1"}},
		func(string) (Inspected, error) { return Inspected{}, boom })
	if !errors.Is(err, boom) {
		t.Errorf("Judge = %v; want %v", err, boom)
	}
}
