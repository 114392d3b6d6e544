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
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// followUpFactor and maxFollowUpDelay pace the reconciles that only follow
// a service's progress (see followUps).
const (
	followUpFactor   = 5
	maxFollowUpDelay = 5 * time.Second
)

// followUps paces the reconciles that only follow a service's progress:
// an agent's report of its containers, its entry landing in a node's
// assignment, its own status patch coming back through the watch. A
// service on n nodes gets n of each in a rollout, and each reconcile walks
// its n instances: queued at once, a rollout costs n² (the manager used
// as much CPU as kube-apiserver at 2,000 nodes). Queued after
// followUpDelay of the service's last reconcile, they fold into one
// (the queue keeps the earliest time of an item), and follow-ups take at
// most about 1/followUpFactor of a worker, whatever the size. What
// changes what is wanted (the spec, a node's state or labels, a
// deletion) is queued at once.
type followUps struct {
	cost *lockedMap[types.NamespacedName, time.Duration]
}

func newFollowUps() *followUps {
	return &followUps{cost: new(lockedMap[types.NamespacedName, time.Duration])}
}

// followUpDelay is how long a follow-up of a service waits, from how long
// its last reconcile took: a small service's at once, a wide one's after
// a fraction of a second.
func followUpDelay(cost time.Duration) time.Duration {
	return min(followUpFactor*cost, maxFollowUpDelay)
}

// took records how long a reconcile of a service took. A reconcile that
// waited for its writes is not recorded: it says how slow the API server
// was, not how costly the service is.
func (f *followUps) took(key types.NamespacedName, d time.Duration) {
	if f != nil {
		f.cost.set(key, d)
	}
}

// dropService drops a deleted service.
func (f *followUps) dropService(key types.NamespacedName) {
	if f != nil {
		f.cost.drop(key)
	}
}

// add queues a follow-up of a service.
func (f *followUps) add(q workqueue.TypedRateLimitingInterface[reconcile.Request], key types.NamespacedName) {
	var cost time.Duration
	if f != nil {
		cost, _ = f.cost.get(key)
	}
	q.AddAfter(reconcile.Request{NamespacedName: key}, followUpDelay(cost))
}

// statusOnly says whether an update of a service changed nothing but its
// status: neither its spec (generation) nor what its metadata asks for.
func statusOnly(old, cur client.Object) bool {
	return old.GetGeneration() == cur.GetGeneration() &&
		old.GetDeletionTimestamp().Equal(cur.GetDeletionTimestamp()) &&
		maps.Equal(old.GetLabels(), cur.GetLabels()) &&
		maps.Equal(old.GetAnnotations(), cur.GetAnnotations()) &&
		slices.Equal(old.GetFinalizers(), cur.GetFinalizers()) &&
		equality.Semantic.DeepEqual(old.GetOwnerReferences(), cur.GetOwnerReferences())
}

// changedTasks are the task ids whose containers a report changed in what
// a service's status reads: an entry added, removed or different but for
// its usage figures, which only the facade reads. A report of usage alone
// follows no service.
func changedTasks(was, is []edgev1alpha1.ObservedContainer) map[string]bool {
	before := make(map[string]edgev1alpha1.ObservedContainer, len(was))
	for _, c := range was {
		if c.TaskID != "" {
			before[c.TaskID] = withoutUsage(c)
		}
	}
	changed := map[string]bool{}
	for _, c := range is {
		if c.TaskID == "" {
			continue
		}
		old, ok := before[c.TaskID]
		if !ok || !equality.Semantic.DeepEqual(old, withoutUsage(c)) {
			changed[c.TaskID] = true
		}
		delete(before, c.TaskID)
	}
	for task := range before {
		changed[task] = true
	}
	return changed
}

// withoutUsage is a container's entry without its usage figures.
func withoutUsage(c edgev1alpha1.ObservedContainer) edgev1alpha1.ObservedContainer {
	c.CPU, c.Memory, c.Size = nil, nil, nil
	return c
}

// followsTasks says whether an entry of a node's assignment has an
// instance among tasks.
func followsTasks(e edgev1alpha1.AssignedService, tasks map[string]bool) bool {
	return slices.ContainsFunc(e.Instances, func(i edgev1alpha1.AssignedInstance) bool { return tasks[i.TaskID] })
}
