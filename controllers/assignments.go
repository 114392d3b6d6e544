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

package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/index"
	"github.com/edgeplane/edgeplane/internal/instances"
)

// assignmentWriters bounds one reconcile's assignment writes in flight: a
// spec change of a service on 5,000 nodes is 5,000 writes, one per node.
const assignmentWriters = 16

// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=nodeassignments,verbs=get;list;watch;create;patch

// assignmentsOf returns the service's entries in the nodes' assignments,
// by node, as the cache holds them.
func (r *EdgeServiceReconciler) assignmentsOf(ctx context.Context, svc *edgev1alpha1.EdgeService) (map[string]edgev1alpha1.AssignedService, error) {
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
// service: its instances there and the configuration of their revision.
func assignedEntries(svc *edgev1alpha1.EdgeService, placed []edgev1alpha1.ServiceInstance, rev int64, spec *edgev1alpha1.DeploySpec, deleting bool) map[string]edgev1alpha1.AssignedService {
	out := map[string]edgev1alpha1.AssignedService{}
	for _, inst := range placed {
		e, ok := out[inst.NodeName]
		if !ok {
			e = edgev1alpha1.AssignedService{UID: string(svc.UID), Revision: rev, Spec: *spec, Deleting: deleting}
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
// instance left.
func (r *EdgeServiceReconciler) syncAssignments(ctx context.Context, svc *edgev1alpha1.EdgeService, want map[string]edgev1alpha1.AssignedService) error {
	have, err := r.assignmentsOf(ctx, svc)
	if err != nil {
		return err
	}
	writes := map[string]*edgev1alpha1.AssignedService{}
	for node, e := range want {
		if h, ok := have[node]; !ok || !equality.Semantic.DeepEqual(h, e) {
			writes[node] = &e
		}
	}
	for node := range have {
		if _, ok := want[node]; !ok {
			writes[node] = nil
		}
	}
	key := edgev1alpha1.AssignmentKey(svc.Namespace, svc.Name)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(assignmentWriters)
	for node, e := range writes {
		g.Go(func() error {
			if err := r.writeAssignment(gctx, node, key, e); err != nil {
				return fmt.Errorf("writing the assignment of node %s: %w", node, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// writeAssignment sets one service's entry in a node's assignment, or
// takes it out (e nil), touching no other service's entry: each service's
// reconcile writes only its own key, so two never conflict and no
// resourceVersion is needed. A JSON patch's add replaces the entry whole,
// where a merge patch would keep fields the new entry leaves out.
func (r *EdgeServiceReconciler) writeAssignment(ctx context.Context, node, key string, e *edgev1alpha1.AssignedService) error {
	a := &edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if e == nil {
		return client.IgnoreNotFound(r.Patch(ctx, a, mergePatch(key, nil), client.FieldOwner(FieldOwner)))
	}
	err := r.Patch(ctx, a, addPatch(key, e), client.FieldOwner(FieldOwner))
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return r.createAssignment(ctx, node, key, e)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		// The add fails when the assignment holds no services at all;
		// then the key is absent and a merge patch sets it whole.
		cur := &edgev1alpha1.NodeAssignment{}
		if gerr := r.APIReader.Get(ctx, types.NamespacedName{Name: node}, cur); gerr != nil || len(cur.Spec.Services) > 0 {
			return err
		}
		return r.Patch(ctx, a, mergePatch(key, e), client.FieldOwner(FieldOwner))
	}
	return err
}

// createAssignment makes a node's assignment holding one service's entry,
// owned by the node's EdgeNode so that it goes with the node.
func (r *EdgeServiceReconciler) createAssignment(ctx context.Context, node, key string, e *edgev1alpha1.AssignedService) error {
	n := &edgev1alpha1.EdgeNode{}
	if err := r.Get(ctx, types.NamespacedName{Name: node}, n); err != nil {
		return err
	}
	a := &edgev1alpha1.NodeAssignment{
		ObjectMeta: metav1.ObjectMeta{Name: node, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: edgev1alpha1.GroupVersion.String(), Kind: "EdgeNode", Name: n.Name, UID: n.UID, Controller: ptr.To(true),
		}}},
		Spec: edgev1alpha1.NodeAssignmentSpec{Services: map[string]edgev1alpha1.AssignedService{key: *e}},
	}
	err := r.Create(ctx, a, client.FieldOwner(FieldOwner))
	if apierrors.IsAlreadyExists(err) {
		// Another service made it first, with its entry: add ours.
		return r.Patch(ctx, &edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{Name: node}}, addPatch(key, e), client.FieldOwner(FieldOwner))
	}
	return err
}

// addPatch sets one key of spec.services whole (JSON patch add).
func addPatch(key string, e *edgev1alpha1.AssignedService) client.Patch {
	raw, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/services/" + pointerEscape(key), "value": e}})
	return client.RawPatch(types.JSONPatchType, raw)
}

// mergePatch sets or (e nil) removes one key of spec.services.
func mergePatch(key string, e *edgev1alpha1.AssignedService) client.Patch {
	var v any
	if e != nil {
		v = e
	}
	raw, _ := json.Marshal(map[string]any{"spec": map[string]any{"services": map[string]any{key: v}}})
	return client.RawPatch(types.MergePatchType, raw)
}

// pointerEscape escapes a key for a JSON pointer (RFC 6901).
func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// containersLeft counts the service's containers the agents still report:
// those of its instances, in the nodes' assignments or (placed before
// assignments existed) in its status.
func (r *EdgeServiceReconciler) containersLeft(ctx context.Context, svc *edgev1alpha1.EdgeService, entries map[string]edgev1alpha1.AssignedService) (int, error) {
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
// the node, the services whose entry changed (someone else's edit is
// written back), and, when an entry shrank, the services left short of
// instances, which may take the room.
func (r *EdgeServiceReconciler) assignmentChanged(q workqueue.TypedRateLimitingInterface[reconcile.Request], old, cur *edgev1alpha1.NodeAssignment) {
	freed := false
	for key, e := range old.Spec.Services {
		c, ok := cur.Spec.Services[key]
		if ok && equality.Semantic.DeepEqual(c, e) {
			continue
		}
		enqueueKey(q, key)
		if !ok || c.UID != e.UID {
			r.load.setNode(types.UID(e.UID), old.Name, 0)
		}
		freed = freed || !ok || len(c.Instances) < len(e.Instances)
	}
	for key, e := range cur.Spec.Services {
		if o, ok := old.Spec.Services[key]; !ok || !equality.Semantic.DeepEqual(o, e) {
			enqueueKey(q, key)
			r.load.setNode(types.UID(e.UID), cur.Name, len(e.Instances))
		}
	}
	if freed {
		r.wakeUnplaced(q)
	}
}

func enqueueKey(q workqueue.TypedRateLimitingInterface[reconcile.Request], key string) {
	if ns, name, ok := strings.Cut(key, "/"); ok {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
	}
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
type intents struct {
	mu        sync.Mutex
	byService map[types.UID]map[string]edgev1alpha1.AssignedService
}

func newIntents() *intents {
	return &intents{byService: map[types.UID]map[string]edgev1alpha1.AssignedService{}}
}

// of returns what was meant for a service, if anything was.
func (i *intents) of(uid types.UID) (map[string]edgev1alpha1.AssignedService, bool) {
	if i == nil {
		return nil, false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	e, ok := i.byService[uid]
	return e, ok
}

// set records what is meant for a service; its map is not changed after.
func (i *intents) set(uid types.UID, entries map[string]edgev1alpha1.AssignedService) {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.byService[uid] = entries
}

func (i *intents) drop(uid types.UID) {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.byService, uid)
}
