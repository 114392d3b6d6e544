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

package assignment

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// TestWriterQueue checks what waits for a node's next write: one entry
// per service, the last asked for, and everyone who waits on it told.
func TestWriterQueue(t *testing.T) {
	w := NewWriter(nil, nil, nil, nil)
	entry := func(rev int64) *edgev1alpha1.AssignedService {
		return &edgev1alpha1.AssignedService{UID: "u", Revision: rev}
	}
	var told []string
	tell := func(who string) func(error) {
		return func(err error) { told = append(told, fmt.Sprint(who, " ", err)) }
	}

	// A wide service reconciled 100 times while its write waits.
	for rev := range int64(100) {
		w.Write("n1", "ns/a", entry(rev+1), nil)
	}
	w.Write("n1", "ns/b", entry(7), tell("b"))
	w.Write("n1", "ns/a", nil, tell("a-waits"))
	w.Write("n2", "ns/a", entry(3), nil)

	ops := w.queued["n1"]
	if len(ops) != 2 || ops[0].key != "ns/a" || ops[0].entry != nil || ops[1].key != "ns/b" || ops[1].entry.Revision != 7 {
		t.Fatalf("node n1's queue = %+v, want ns/a taken out then ns/b at revision 7", ops)
	}
	if got := len(w.queued["n2"]); got != 1 {
		t.Fatalf("node n2's queue holds %d entries, want 1", got)
	}
	boom := errors.New("boom")
	for _, op := range ops {
		w.settle("n1", op, boom)
	}
	if want := []string{"a-waits boom", "b boom"}; !reflect.DeepEqual(told, want) {
		t.Errorf("told %q, want %q", told, want)
	}
	if !w.Failing("ns/a") || w.Failure("ns/b") != "the assignment of node n1 cannot be written: boom" {
		t.Errorf("failures not kept: %q %q", w.Failure("ns/a"), w.Failure("ns/b"))
	}
	// A later write the cache shows done (not asked for again) clears it.
	w.Settled("ns/a", map[string]*edgev1alpha1.AssignedService{})
	if w.Failing("ns/a") {
		t.Errorf("ns/a still failing after its nodes hold what they should")
	}
}

func TestRefusedEntry(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("etcdserver: request is too large"), true},
		{errors.New("connection refused"), false},
	} {
		if got := refusedEntry(tc.err); got != tc.want {
			t.Errorf("refusedEntry(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestExtraWriters(t *testing.T) {
	for _, tc := range []struct{ waiting, want int }{
		{0, 0}, {20, 0}, // a few nodes, many services each: batches stay big
		{nodesPerExtraWriter, 1}, {2*nodesPerExtraWriter + 1, 2},
		{5000, maxAssignmentWriters - assignmentWriters}, // a wide rollout: all of them
	} {
		if got := extraWriters(tc.waiting); got != tc.want {
			t.Errorf("extraWriters(%d) = %d, want %d", tc.waiting, got, tc.want)
		}
	}
}
