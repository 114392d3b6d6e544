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
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// progressOnly says whether a status write would only tell of a healthy
// rollout going on in a service observed before: instances deploying at
// the current revision, none failed, everything placed, and nothing a
// node's agent reads from the status (the instances on nodes that predate
// NodeAssignment). Such a write can wait a little: the write that sees
// the instances run, or fail, carries it, and a rollout that runs within
// the wait costs one status write instead of two. Meanwhile the stored
// observedGeneration, below the spec's, tells readers the change is in
// progress. A new service's first status is never held: without one,
// kstatus (Flux) reads the service as Current. What went wrong, or right
// again after a problem, is never held either.
func progressOnly(was, is *edgev1alpha1.EdgeServiceStatus) bool {
	prog := meta.FindStatusCondition(is.Conditions, edgev1alpha1.ConditionProgressing)
	return was.ObservedGeneration > 0 &&
		prog != nil && prog.Status == metav1.ConditionTrue && prog.Reason == edgev1alpha1.ReasonDeploying &&
		meta.IsStatusConditionFalse(is.Conditions, edgev1alpha1.ConditionDegraded) &&
		is.FailedReplicas == 0 &&
		!meta.IsStatusConditionTrue(was.Conditions, edgev1alpha1.ConditionDegraded) &&
		!meta.IsStatusConditionTrue(was.Conditions, edgev1alpha1.ConditionStalled) &&
		equality.Semantic.DeepEqual(was.Containers, is.Containers)
}

// statusHolds remembers, per service, since when a status write that only
// tells of progress has waited. It lives in memory: a manager that takes
// over holds such a write again, for at most the hold.
type statusHolds struct {
	hold  time.Duration
	since *lockedMap[types.NamespacedName, time.Time]
}

func newStatusHolds(hold time.Duration) *statusHolds {
	return &statusHolds{hold: hold, since: new(lockedMap[types.NamespacedName, time.Time])}
}

// left says how much longer the service's status write may wait: 0 writes
// it now. A write that is not progressOnly, or a hold of 0, waits never.
func (h *statusHolds) left(key types.NamespacedName, progress bool, now time.Time) time.Duration {
	if h == nil || h.hold <= 0 || !progress {
		return 0
	}
	since, ok := h.since.get(key)
	if !ok {
		since = now
		h.since.set(key, since)
	}
	return max(since.Add(h.hold).Sub(now), 0)
}

// written forgets the hold of a service whose status was written, or that
// is gone.
func (h *statusHolds) written(key types.NamespacedName) {
	if h != nil {
		h.since.drop(key)
	}
}
