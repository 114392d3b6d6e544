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

package manager

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The manager stays unready while the API server answers EdgeService
// creates with 503 (a MutatingAdmissionPolicy that has not the new CRD's
// schema yet), and is ready from the first other answer on, without
// asking again.
func TestAdmitsServices(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("Resource kind edge.edgeplane.io/v1alpha1, Kind=EdgeService not found")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "edge.edgeplane.io", Resource: "edgeservices"}, "x", errors.New("no"))
	for _, tc := range []struct {
		name    string
		answers []error
		ready   []bool
		calls   int
	}{
		{"admitted at once", []error{nil, unavailable}, []bool{true, true}, 1},
		{"unready until admitted", []error{unavailable, unavailable, nil, unavailable}, []bool{false, false, true, true}, 3},
		{"forbidden cannot tell: ready", []error{forbidden, unavailable}, []bool{true, true}, 1},
		{"no answer: unready until one", []error{errors.New("connection refused"), nil}, []bool{false, true}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			check := admitsServices(func(context.Context) error {
				calls++
				return tc.answers[calls-1]
			})
			for i, want := range tc.ready {
				err := check(httptest.NewRequest("GET", "/readyz", nil))
				if (err == nil) != want {
					t.Fatalf("probe %d: ready %v (%v), want %v", i+1, err == nil, err, want)
				}
			}
			if calls != tc.calls {
				t.Fatalf("%d creates, want %d: once admitted, the API server is not asked again", calls, tc.calls)
			}
		})
	}
}
