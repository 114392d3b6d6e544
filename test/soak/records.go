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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/records"
)

// Ledger holds, per service, every version of its spec the run's watch
// delivered and every DeployRecord created for it, as the records came:
// records are pruned past revisionHistoryLimit during the run, so what
// the API server holds at the end cannot say what was recorded.
type Ledger struct {
	mu    sync.Mutex
	names map[types.UID]string
	// delivered: service -> generation -> the hash of its configuration.
	delivered map[types.UID]map[int64]string
	// recorded: service -> generation -> the records naming it.
	recorded map[types.UID]map[int64]map[types.UID]bool
}

// NewLedger is an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{names: map[types.UID]string{}, delivered: map[types.UID]map[int64]string{}, recorded: map[types.UID]map[int64]map[types.UID]bool{}}
}

// ConfigHash hashes what a DeployRecord holds of a spec: two versions of
// the same hash are one configuration (a change of paused, strategy or
// revisionHistoryLimit alone appends no record).
func ConfigHash(spec *edgev1alpha1.EdgeServiceSpec) string {
	data, err := json.Marshal(records.ServiceConfig(spec))
	if err != nil {
		panic(err) // a spec always marshals
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// Delivered notes a version of a service as the watch delivered it.
func (l *Ledger) Delivered(svc types.UID, name string, generation int64, hash string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names[svc] = name
	if l.delivered[svc] == nil {
		l.delivered[svc] = map[int64]string{}
	}
	l.delivered[svc][generation] = hash
}

// Recorded notes a record of a service's generation.
func (l *Ledger) Recorded(svc types.UID, generation int64, record types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.recorded[svc] == nil {
		l.recorded[svc] = map[int64]map[types.UID]bool{}
	}
	if l.recorded[svc][generation] == nil {
		l.recorded[svc][generation] = map[types.UID]bool{}
	}
	l.recorded[svc][generation][record] = true
}

// Check counts, once every service has caught up, the versions that
// changed the configuration but were not recorded (missing), and the
// records beyond one per such version (duplicates): a version recorded
// twice, or one that changed nothing recorded at all. A version changes
// the configuration when its hash differs from the version delivered
// before it; the first always does. Notes say which.
func (l *Ledger) Check() (missing, duplicates int, notes []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	uids := make([]types.UID, 0, len(l.delivered))
	for uid := range l.delivered {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool {
		return l.names[uids[i]] < l.names[uids[j]] || l.names[uids[i]] == l.names[uids[j]] && uids[i] < uids[j]
	})
	for _, uid := range uids {
		versions := l.delivered[uid]
		gens := make([]int64, 0, len(versions))
		for g := range versions {
			gens = append(gens, g)
		}
		slices.Sort(gens)
		prev := ""
		for _, g := range gens {
			changed := versions[g] != prev
			prev = versions[g]
			n := len(l.recorded[uid][g])
			switch {
			case changed && n == 0:
				missing++
				notes = append(notes, fmt.Sprintf("%s: generation %d delivered but not recorded", l.names[uid], g))
			case changed && n > 1:
				duplicates += n - 1
				notes = append(notes, fmt.Sprintf("%s: generation %d recorded %d times", l.names[uid], g, n))
			case !changed && n > 0:
				duplicates += n
				notes = append(notes, fmt.Sprintf("%s: generation %d changed no configuration but was recorded %d times", l.names[uid], g, n))
			}
		}
	}
	return missing, duplicates, notes
}

// Settled says whether a service has caught up with its spec and has no
// rollout under way: the last generation acted on, every instance
// running the current revision, which every instance ran. Only then is
// the manager bound to have pruned its records to revisionHistoryLimit:
// while a rollout moves it keeps the revisions instances still run.
func Settled(s *edgev1alpha1.EdgeService) bool {
	st := s.Status
	return s.DeletionTimestamp == nil && !s.Spec.Paused && st.ObservedGeneration == s.Generation && st.Revision > 0 &&
		st.DeployedRevision == st.Revision && st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas
}

// HistoryLimit is a service's revisionHistoryLimit, the schema's default
// when unset.
func HistoryLimit(s *edgev1alpha1.EdgeService) int {
	if s.Spec.RevisionHistoryLimit == nil {
		return 10
	}
	return int(*s.Spec.RevisionHistoryLimit)
}

// OverLimit names the settled services holding more records than their
// revisionHistoryLimit, with their counts; counts are by service UID.
func OverLimit(services []edgev1alpha1.EdgeService, counts map[types.UID]int) map[types.UID]string {
	out := map[types.UID]string{}
	for i := range services {
		s := &services[i]
		if n, limit := counts[s.UID], HistoryLimit(s); Settled(s) && n > limit {
			out[s.UID] = fmt.Sprintf("%s: %d records, revisionHistoryLimit %d", s.Name, n, limit)
		}
	}
	return out
}

// RecordBound is the most DeployRecords the services may hold between
// them: each its revisionHistoryLimit, and two more while a rollout is
// under way, whose revisions the manager keeps while instances run them.
// Services being deleted hold theirs until the garbage collector takes
// them.
func RecordBound(services []edgev1alpha1.EdgeService) int {
	n := 0
	for i := range services {
		n += HistoryLimit(&services[i])
		if !Settled(&services[i]) {
			n += 2
		}
	}
	return n
}

// LimitWatch follows OverLimit from sample to sample. A settled service
// may be over its limit for a moment, between the reconcile that records
// a revision and the one that prunes after it; over its limit in two
// samples a minute apart, settled in both, it is over for good.
type LimitWatch struct {
	prev map[types.UID]string
	over map[types.UID]string
}

// Observe takes one sample's OverLimit.
func (w *LimitWatch) Observe(cur map[types.UID]string) {
	if w.over == nil {
		w.over = map[types.UID]string{}
	}
	for uid, note := range cur {
		if _, ok := w.prev[uid]; ok {
			w.over[uid] = note
		}
	}
	w.prev = cur
}

// Over are the services found over their limit for good, by UID: a map
// of the caller's.
func (w *LimitWatch) Over() map[types.UID]string {
	out := make(map[types.UID]string, len(w.over))
	for uid, note := range w.over {
		out[uid] = note
	}
	return out
}
