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
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/edgeservice/assignment"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/instances"
)

// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=nodeassignments,verbs=get;list;watch;create;patch

// assignmentsOf returns the service's entries in the nodes' assignments,
// by node, as the cache holds them.
func (r *Reconciler) assignmentsOf(ctx context.Context, svc *edgev1alpha1.EdgeService) (map[string]edgev1alpha1.AssignedService, error) {
	key := edgev1alpha1.AssignmentKey(svc.Namespace, svc.Name)
	list := &edgev1alpha1.NodeAssignmentList{}
	if err := r.List(ctx, list, client.MatchingFields{index.AssignmentByService: key}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the service's node assignments: %w", err)
	}
	out := make(map[string]edgev1alpha1.AssignedService, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Name] = list.Items[i].Spec.Services[key]
	}
	return out, nil
}

// assignedEntries is what each node's assignment should hold of the
// service: its instances there and the revision the rollout gives the
// node, with its configuration.
func assignedEntries(svc *edgev1alpha1.EdgeService, placed []edgev1alpha1.ServiceInstance, revisions map[string]nodeRevision) map[string]edgev1alpha1.AssignedService {
	out := map[string]edgev1alpha1.AssignedService{}
	for _, inst := range placed {
		e, ok := out[inst.NodeName]
		if !ok {
			r := revisions[inst.NodeName]
			e = edgev1alpha1.AssignedService{UID: string(svc.UID), Revision: r.revision, Spec: *r.spec}
		}
		e.Instances = append(e.Instances, edgev1alpha1.AssignedInstance{
			TaskID: inst.TaskID, Name: inst.Name, Revision: inst.Revision, DeployNum: inst.DeployNum, TaskCreatedTime: inst.TaskCreatedTime,
		})
		out[inst.NodeName] = e
	}
	for node, e := range out {
		sort.Slice(e.Instances, func(i, j int) bool { return e.Instances[i].TaskID < e.Instances[j].TaskID })
		out[node] = e
	}
	return out
}

// syncAssignments writes the service's entry into each node's assignment
// where it differs from want, and takes it out where the service has no
// instance left. It compares want with the cache and with prev, what this
// process meant before (nil: nothing): a write still queued is not in the
// cache yet, and one that undoes it, or takes out an entry it adds, must
// follow it. It waits for the writes when wait is set, and otherwise
// leaves them to the writer. have is the cache's, read by the caller.
func (r *Reconciler) syncAssignments(ctx context.Context, svc *edgev1alpha1.EdgeService, have, prev, want map[string]edgev1alpha1.AssignedService, wait bool) error {
	writes := assignmentWrites(have, prev, want)
	key := edgev1alpha1.AssignmentKey(svc.Namespace, svc.Name)
	if r.writer == nil { // a reconciler not set up with a manager, as some tests make
		for node, e := range writes {
			if err := assignment.WriteNow(ctx, r.Client, r.APIReader, node, key, e); err != nil {
				return fmt.Errorf("writing the assignment of node %s: %w", node, err)
			}
		}
		return nil
	}
	r.writer.Settled(key, writes)
	if !wait {
		for node, e := range writes {
			r.writer.Write(node, key, e, nil)
		}
		return nil
	}
	errs := make(chan error, len(writes))
	for node, e := range writes {
		r.writer.Write(node, key, e, func(err error) {
			if err != nil {
				err = fmt.Errorf("writing the assignment of node %s: %w", node, err)
			}
			errs <- err
		})
	}
	// Bounded well inside the reconcile's timeout: a wide service's
	// writes on a slow API server take longer than a reconcile may, and a
	// reconcile that never gets to its status write would say nothing.
	timeout := time.NewTimer(maxWriteWait)
	defer timeout.Stop()
	var first error
	for done := range len(writes) {
		select {
		case err := <-errs:
			first = cmp.Or(first, err)
		case <-timeout.C:
			return cmp.Or(first, fmt.Errorf("%w: %d of %d", errWritesPending, len(writes)-done, len(writes)))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return first
}

// assignmentWrites are the writes that bring the nodes' entries from
// have (the cache's) and prev (what this process meant before) to want:
// an entry to write, or nil to take it out.
func assignmentWrites(have, prev, want map[string]edgev1alpha1.AssignedService) map[string]*edgev1alpha1.AssignedService {
	writes := map[string]*edgev1alpha1.AssignedService{}
	for node, e := range want {
		h, inCache := have[node]
		p, meant := prev[node]
		if !inCache || !sameEntry(h, e) || (meant && !sameEntry(p, e)) {
			writes[node] = &e
		}
	}
	for _, was := range []map[string]edgev1alpha1.AssignedService{have, prev} {
		for node := range was {
			if _, ok := want[node]; !ok {
				writes[node] = nil
			}
		}
	}
	return writes
}

// sameEntry says whether two entries are semantically equal. Values equal
// field by field are, and the standard library says so several times
// faster than the semantic comparison, which a service on thousands of
// nodes would run twice per node and reconcile.
func sameEntry(a, b edgev1alpha1.AssignedService) bool {
	return reflect.DeepEqual(a, b) || equality.Semantic.DeepEqual(a, b)
}

// maxWriteWait bounds how long a reconcile waits for its writes.
const maxWriteWait = 10 * time.Second

// errWritesPending says writes were still queued when a reconcile stopped
// waiting for them; they go on, and a failure wakes the service.
var errWritesPending = errors.New("assignment writes still pending")

// containersLeft counts the service's containers the agents still report:
// those of its instances, in the nodes' assignments or (placed before
// assignments existed) in its status.
func (r *Reconciler) containersLeft(ctx context.Context, svc *edgev1alpha1.EdgeService, entries map[string]edgev1alpha1.AssignedService) (int, error) {
	existing := existingInstances(svc, entries)
	nodes, err := r.nodesFor(ctx, svc, existing)
	if err != nil {
		return 0, err
	}
	left := 0
	for _, inst := range existing {
		if observed(nodes, inst) != nil {
			left++
		}
	}
	return left, nil
}

// assignmentChanged follows a change of a node's assignment: the load of
// the node, the services whose entry changed (mostly the writer's write
// landing: a follow-up; someone else's edit is written back), and, when an
// entry shrank, the services left short of instances, which may take the
// room.
func (r *Reconciler) assignmentChanged(q workqueue.TypedRateLimitingInterface[reconcile.Request], old, cur *edgev1alpha1.NodeAssignment) {
	freed := false
	for key, e := range old.Spec.Services {
		c, ok := cur.Spec.Services[key]
		if ok && equality.Semantic.DeepEqual(c, e) {
			continue
		}
		r.followUpKey(q, key)
		if !ok || c.UID != e.UID {
			r.load.setNode(types.UID(e.UID), old.Name, 0)
		}
		freed = freed || !ok || len(c.Instances) < len(e.Instances)
	}
	for key, e := range cur.Spec.Services {
		if o, ok := old.Spec.Services[key]; !ok || !equality.Semantic.DeepEqual(o, e) {
			r.followUpKey(q, key)
			r.load.setNode(types.UID(e.UID), cur.Name, len(e.Instances))
		}
	}
	if freed {
		r.wakeUnplaced(q)
	}
}

// followUpKey queues a follow-up of the service an entry key names.
func (r *Reconciler) followUpKey(q workqueue.TypedRateLimitingInterface[reconcile.Request], key string) {
	if k, ok := serviceKey(key); ok {
		r.followUps.add(q, k)
	}
}

// serviceKey is the service an assignment's entry key names.
func serviceKey(key string) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(key, "/")
	return types.NamespacedName{Namespace: ns, Name: name}, ok
}

// existingInstances are the service's instances as placed before: those
// in the nodes' assignments, and those only its status names (placed
// before assignments existed: an upgrade), which keep their task ids and
// so their containers.
func existingInstances(svc *edgev1alpha1.EdgeService, entries map[string]edgev1alpha1.AssignedService) []edgev1alpha1.ServiceInstance {
	var out []edgev1alpha1.ServiceInstance
	seen := map[string]bool{}
	nodes := make([]string, 0, len(entries))
	for node := range entries {
		nodes = append(nodes, node)
	}
	sort.Strings(nodes) // placement's choices stay the same from one reconcile to the next
	for _, node := range nodes {
		e := entries[node]
		for _, inst := range instances.Of(node, &e) {
			seen[inst.TaskID] = true
			out = append(out, inst)
		}
	}
	for _, inst := range svc.Status.Containers {
		if !seen[inst.TaskID] {
			out = append(out, inst)
		}
	}
	return out
}

// intents holds, per service, the entries this process last meant each
// node's assignment to hold. Placement starts from them rather than from
// the cache, which may not show this process's own writes yet (placing
// again from a stale view would replace instances) and shows a hand edit
// of an assignment, which is written back instance for instance. A new
// leader starts from the cache: the manager exits when it loses the lease.
// A service's map is not changed once set.
type intents = lockedMap[types.UID, map[string]edgev1alpha1.AssignedService]
