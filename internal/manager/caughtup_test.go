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
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// A replica is ready once the leader has observed every service as far as
// the replica's cache first held it, not before, and at the latest after
// caughtUpLimit; it never waits for services created or deleted since.
func TestLeaderCaughtUp(t *testing.T) {
	svc := func(uid string, gen, observed int64) edgev1alpha1.EdgeService {
		s := edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s-" + uid, UID: types.UID(uid), Generation: gen}}
		s.Status.ObservedGeneration = observed
		return s
	}
	deleting := func(s edgev1alpha1.EdgeService) edgev1alpha1.EdgeService {
		s.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		return s
	}
	type probe struct {
		after    time.Duration // since the first probe
		services []edgev1alpha1.EdgeService
		ready    bool
		says     string // in the error while unready
	}
	for _, tc := range []struct {
		name   string
		probes []probe
	}{
		{"no services: ready at once", []probe{{0, nil, true, ""}}},
		{"observed already: ready at once", []probe{{0, []edgev1alpha1.EdgeService{svc("a", 3, 3)}, true, ""}}},
		{"unready until the leader observes the generation first seen", []probe{
			{0, []edgev1alpha1.EdgeService{svc("a", 3, 1), svc("b", 2, 2)}, false, "default/s-a (observed at generation 1 of 3)"},
			{time.Second, []edgev1alpha1.EdgeService{svc("a", 4, 2), svc("b", 2, 2)}, false, "default/s-a (observed at generation 2 of 3)"},
			{2 * time.Second, []edgev1alpha1.EdgeService{svc("a", 5, 3), svc("b", 3, 2)}, true, ""},
			{3 * time.Second, []edgev1alpha1.EdgeService{svc("a", 6, 3)}, true, ""},
		}},
		{"a service deleted, being deleted or created since is not waited for", []probe{
			{0, []edgev1alpha1.EdgeService{svc("a", 3, 1), deleting(svc("b", 4, 1)), svc("c", 2, 1)}, false, "default/s-a (observed at generation 1 of 3) and 1 more"},
			{time.Second, []edgev1alpha1.EdgeService{deleting(svc("a", 4, 1)), svc("d", 2, 0)}, true, ""},
		}},
		{"a service never observed holds it for the limit only", []probe{
			{0, []edgev1alpha1.EdgeService{svc("a", 3, 1)}, false, "s-a"},
			{caughtUpLimit - time.Second, []edgev1alpha1.EdgeService{svc("a", 3, 1)}, false, "s-a"},
			{caughtUpLimit, []edgev1alpha1.EdgeService{svc("a", 3, 1)}, true, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
			clk := clocktesting.NewFakePassiveClock(start)
			var current []edgev1alpha1.EdgeService
			lists := 0
			check := leaderCaughtUp(func(context.Context) ([]edgev1alpha1.EdgeService, error) {
				lists++
				return current, nil
			}, clk)
			wasReady := false
			for i, p := range tc.probes {
				clk.SetTime(start.Add(p.after))
				current = p.services
				before := lists
				err := check(httptest.NewRequest("GET", "/readyz", nil))
				if (err == nil) != p.ready {
					t.Fatalf("probe %d: ready %v (%v), want %v", i+1, err == nil, err, p.ready)
				}
				if err != nil && !strings.Contains(err.Error(), p.says) {
					t.Fatalf("probe %d: %q does not say %q", i+1, err, p.says)
				}
				if wasReady && lists != before {
					t.Fatalf("probe %d listed the services again once ready", i+1)
				}
				wasReady = wasReady || err == nil
			}
		})
	}
}
