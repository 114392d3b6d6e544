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
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// caughtUpLimit bounds how long a replica waits for the leader to catch
// up before it is ready anyway: a service the leader cannot observe must
// not hold a rollout of the manager forever.
const caughtUpLimit = 2 * time.Minute

// leaderCaughtUp is a readiness check of a replica that runs the
// controllers: ready once every service has been observed
// (status.observedGeneration) at least at the generation this replica's
// cache first held. A version superseded before this replica watched is
// known only to the replicas that watched it; a leader records a service's
// versions before it observes its generation, so once it has observed past
// them they are recorded, and a rolling update that stops the next old
// replica only when this one is ready loses none
// (docs/design/0009-every-version-recorded-through-failover.md). Services
// created later, or being deleted, are not waited for. After caughtUpLimit
// the replica is ready anyway and logs which service held it.
func leaderCaughtUp(list func(context.Context) ([]edgev1alpha1.EdgeService, error), clk clock.PassiveClock) func(*http.Request) error {
	var (
		mu    sync.Mutex
		want  map[types.UID]int64 // nil until the first list
		since time.Time
		done  bool
	)
	return func(r *http.Request) error {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return nil
		}
		services, err := list(r.Context())
		if err != nil {
			return err
		}
		if want == nil {
			want, since = map[types.UID]int64{}, clk.Now()
			for _, s := range services {
				if s.DeletionTimestamp == nil {
					want[s.UID] = s.Generation
				}
			}
		}
		lagging := behind(want, services)
		switch {
		case len(lagging) == 0:
			done = true
			return nil
		case clk.Since(since) >= caughtUpLimit:
			done = true
			ctrl.Log.WithName("setup").Info("Ready although the leader has not observed every service as far as this replica first saw it",
				"waited", caughtUpLimit, "services", len(lagging), "first", lagging[0])
			return nil
		}
		more := ""
		if len(lagging) > 1 {
			more = fmt.Sprintf(" and %d more", len(lagging)-1)
		}
		return fmt.Errorf("the leader has not yet observed %s%s", lagging[0], more)
	}
}

// behind lists, sorted, the services of want that are still observed
// below the generation want holds for them; a service deleted, being
// deleted or replaced by another of its name is not waited for.
func behind(want map[types.UID]int64, services []edgev1alpha1.EdgeService) []string {
	var out []string
	for _, s := range services {
		g, ok := want[s.UID]
		if ok && s.DeletionTimestamp == nil && s.Status.ObservedGeneration < g {
			out = append(out, fmt.Sprintf("%s/%s (observed at generation %d of %d)", s.Namespace, s.Name, s.Status.ObservedGeneration, g))
		}
	}
	slices.Sort(out)
	return out
}
