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

// Package assignment writes the nodes' NodeAssignments for the
// EdgeService reconciler: a queue per node, writes batched and bounded.
package assignment

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/internal/patch"
	"github.com/edgeplane/edgeplane/internal/shared/metapatch"
)

// assignmentWriters is how many assignment writes are in flight while
// few nodes wait: where many services share few nodes, fewer writes in
// flight make bigger batches (BenchmarkConverge: 13.4 s with 4, 23 s
// with 16). maxAssignmentWriters is how many are in flight when many
// nodes wait (a spec change of a service on 5,000 nodes is 5,000 writes,
// one per node): each node's entries still go out in one write at a
// time, so more in flight no longer shrinks batches, and 4 writes each
// waiting on its round trip were what a 5,000-node rollout waited on.
const (
	assignmentWriters    = 4
	maxAssignmentWriters = 16
	// nodesPerExtraWriter is how many nodes must wait for each writer
	// beyond assignmentWriters to take part.
	nodesPerExtraWriter = 32
)

// assignmentWriteTimeout bounds one write of a node's assignment, well
// within the reconcile that may wait for it.
const assignmentWriteTimeout = 10 * time.Second

// Writer writes the nodes' assignments for the services'
// reconciles, with assignmentWriters writes in flight, up to
// maxAssignmentWriters while many nodes wait. A node's assignment
// is written by one write at a time, and the entries services ask for
// while it is in flight go into its next write. When many services change
// at once (a GitOps sync), a node's assignment, which holds every service
// on the node, is then written a few times rather than once per service,
// and writes to one object never race each other inside the API server,
// where each lost race decodes, patches and validates the whole object
// again. A reconcile does not wait for its writes unless the service's
// last write failed: then it waits, says why in the service's status and
// backs off while the writes keep failing.
type Writer struct {
	c client.Client // creates, and reads the EdgeNode that owns a new assignment
	// meta patches, answered with the assignment's metadata alone.
	meta *metapatch.Client
	api  client.Reader // reads past the cache
	// wake asks for a service's reconcile when a write of it starts to fail.
	wake func(key string)

	nodes workqueue.TypedInterface[string]

	mu sync.Mutex
	// queued holds, by node, the entries waiting for the node's next write.
	queued map[string][]assignmentOp
	// failed holds, by service and node, the error of the service's last
	// write to the node when it failed.
	failed map[string]map[string]error
}

// assignmentOp sets one service's entry (entry nil: takes it out); done,
// if set, is told the outcome.
type assignmentOp struct {
	key   string
	entry *edgev1alpha1.AssignedService
	done  func(error)
}

// NewWriter makes a Writer that creates through c, patches through meta
// and reads past the cache through api; wake, if set, is called with a
// service's key when a write of it starts to fail. Start runs its writes.
func NewWriter(c client.Client, meta *metapatch.Client, api client.Reader, wake func(key string)) *Writer {
	return &Writer{
		c: c, meta: meta, api: api, wake: wake,
		nodes:  workqueue.NewTyped[string](),
		queued: map[string][]assignmentOp{},
		failed: map[string]map[string]error{},
	}
}

// Start runs the writes until ctx ends: a manager Runnable, on the leader.
// It returns once no write is in flight, so that a manager that gives up
// its lease writes nothing after: the next leader is the only writer.
func (w *Writer) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for i := range maxAssignmentWriters {
		wg.Go(func() {
			for w.busy(ctx, i) && w.writeNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	w.nodes.ShutDown() // the workers fail what is left at once: ctx is done
	wg.Wait()
	return nil
}

// busy waits until writer i has work to take part in: the first
// assignmentWriters always, the others while extraWriters says so. False
// once ctx is done.
func (w *Writer) busy(ctx context.Context, i int) bool {
	for i >= assignmentWriters+extraWriters(w.nodes.Len()) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true
}

// extraWriters is how many writers beyond assignmentWriters take part
// while waiting nodes are queued.
func extraWriters(waiting int) int {
	return min(waiting/nodesPerExtraWriter, maxAssignmentWriters-assignmentWriters)
}

// Write queues one service's entry for a node's assignment. An entry of
// the service still queued for the node is replaced, not added to: while
// a wide service's writes wait, each reconcile asks again for the nodes
// the cache does not show written yet, and the queue must not grow with
// the reconciles.
func (w *Writer) Write(node, key string, e *edgev1alpha1.AssignedService, done func(error)) {
	w.mu.Lock()
	ops := w.queued[node]
	i := slices.IndexFunc(ops, func(op assignmentOp) bool { return op.key == key })
	if i < 0 {
		w.queued[node] = append(ops, assignmentOp{key: key, entry: e, done: done})
	} else {
		ops[i].entry, ops[i].done = e, both(ops[i].done, done)
	}
	w.mu.Unlock()
	w.nodes.Add(node)
}

// both tells a and b (either may be nil).
func both(a, b func(error)) func(error) {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return func(err error) { a(err); b(err) }
}

// writeNext writes the entries queued for one node, in one write. A write
// the API server refuses for what it holds is tried entry by entry, so
// that one entry it cannot take does not fail the services beside it.
func (w *Writer) writeNext(ctx context.Context) bool {
	node, shutdown := w.nodes.Get()
	if shutdown {
		return false
	}
	defer w.nodes.Done(node)
	w.mu.Lock()
	ops := w.queued[node]
	delete(w.queued, node)
	w.mu.Unlock()
	if len(ops) == 0 {
		return true
	}
	err := w.apply(ctx, node, ops)
	if len(ops) > 1 && refusedEntry(err) {
		for _, op := range ops {
			w.settle(node, op, w.apply(ctx, node, []assignmentOp{op}))
		}
		return true
	}
	for _, op := range ops {
		w.settle(node, op, err)
	}
	return true
}

// refusedEntry says whether the API server refused a write for what it
// holds (invalid, or more than etcd stores), rather than failing it.
func refusedEntry(err error) bool {
	return err != nil && (apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || strings.Contains(err.Error(), "too large"))
}

// settle keeps a write's outcome for its service and tells whoever waits.
func (w *Writer) settle(node string, op assignmentOp, err error) {
	w.mu.Lock()
	byNode := w.failed[op.key]
	_, wasFailing := byNode[node]
	switch {
	case err == nil && wasFailing:
		delete(byNode, node)
		if len(byNode) == 0 {
			delete(w.failed, op.key)
		}
	case err != nil:
		if byNode == nil {
			byNode = map[string]error{}
			w.failed[op.key] = byNode
		}
		byNode[node] = err
	}
	w.mu.Unlock()
	if err != nil && !wasFailing && op.done == nil && w.wake != nil {
		w.wake(op.key)
	}
	if op.done != nil {
		op.done(err)
	}
}

// Failing says whether a write of the service failed last time.
func (w *Writer) Failing(key string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.failed[key]) > 0
}

// Failure says which of the service's writes fail, and why.
func (w *Writer) Failure(key string) string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	nodes := make([]string, 0, len(w.failed[key]))
	for node := range w.failed[key] {
		nodes = append(nodes, node)
	}
	if len(nodes) == 0 {
		return ""
	}
	sort.Strings(nodes)
	msg := fmt.Sprintf("the assignment of node %s cannot be written: %v", nodes[0], w.failed[key][nodes[0]])
	if len(nodes) > 1 {
		msg += fmt.Sprintf(" (and %d other nodes)", len(nodes)-1)
	}
	return msg
}

// Settled forgets the failed writes of the service to nodes whose
// assignment holds what it should by now: those not in writes.
func (w *Writer) Settled(key string, writes map[string]*edgev1alpha1.AssignedService) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for node := range w.failed[key] {
		if _, ok := writes[node]; !ok {
			delete(w.failed[key], node)
		}
	}
	if len(w.failed[key]) == 0 {
		delete(w.failed, key)
	}
}

// DropService drops what is kept of a deleted service.
func (w *Writer) DropService(key string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.failed, key)
}

// WriteNow writes one service's entry (nil: takes it out) to a node's
// assignment at once, past the queue: for a reconciler that runs without
// a manager to start the writer, and for the suites.
func WriteNow(ctx context.Context, c client.Client, api client.Reader, node, key string, e *edgev1alpha1.AssignedService) error {
	// No queue: a write made at once needs none, and a workqueue would
	// start a goroutine per call that nothing shuts down.
	w := &Writer{c: c, meta: metapatch.Through(c), api: api}
	return w.apply(ctx, node, []assignmentOp{{key: key, entry: e}})
}

// apply makes one write of a node's assignment holding ops, touching no
// other service's entry, so no resourceVersion is needed. A JSON patch's
// add replaces an entry whole, where a merge patch would keep the fields
// the new entry leaves out; an entry is taken out by setting it and
// removing it, which succeeds whether or not it was there.
func (w *Writer) apply(ctx context.Context, node string, ops []assignmentOp) error {
	ctx, cancel := context.WithTimeout(ctx, assignmentWriteTimeout)
	defer cancel()
	var steps []map[string]any
	sets := map[string]*edgev1alpha1.AssignedService{}
	for _, op := range ops { // one per service: write replaces a queued entry
		path := "/spec/services/" + pointerEscape(op.key)
		if e := op.entry; e != nil {
			sets[op.key] = e
			steps = append(steps, map[string]any{"op": "add", "path": path, "value": e})
		} else {
			steps = append(steps, map[string]any{"op": "add", "path": path, "value": map[string]any{}},
				map[string]any{"op": "remove", "path": path})
		}
	}
	raw, _ := json.Marshal(steps)
	if len(sets) > 0 && !w.cached(ctx, node) {
		// A node's first services: a patch would only find nothing.
		return w.create(ctx, node, sets, raw)
	}
	err := w.patch(ctx, node, types.JSONPatchType, raw)
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		if len(sets) == 0 {
			return nil
		}
		return w.create(ctx, node, sets, raw)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		// The adds fail when the assignment holds no services at all;
		// then no key is there to keep, and a merge patch sets them.
		cur := &edgev1alpha1.NodeAssignment{}
		if gerr := w.api.Get(ctx, types.NamespacedName{Name: node}, cur); gerr != nil || len(cur.Spec.Services) > 0 {
			return err
		}
		if len(sets) == 0 {
			return nil
		}
		raw, _ := json.Marshal(map[string]any{"spec": map[string]any{"services": sets}})
		return w.patch(ctx, node, types.MergePatchType, raw)
	}
	return err
}

// patch writes a node's assignment. Nothing reads the object a write
// returns, so the answer is its metadata alone: kube-apiserver encodes
// that rather than every service on the node.
func (w *Writer) patch(ctx context.Context, node string, pt types.PatchType, raw []byte) error {
	return w.meta.Patch(ctx, &edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{Name: node}}, client.RawPatch(pt, raw),
		metav1.PatchOptions{FieldManager: patch.FieldOwner, FieldValidation: metav1.FieldValidationIgnore})
}

// cached says whether the cache holds the node's assignment. One it does
// not hold yet is created rather than patched; a create that finds it
// made meanwhile falls back to the patch.
func (w *Writer) cached(ctx context.Context, node string) bool {
	err := w.c.Get(ctx, types.NamespacedName{Name: node}, &edgev1alpha1.NodeAssignment{}, client.UnsafeDisableDeepCopy)
	return !apierrors.IsNotFound(err)
}

// create makes a node's assignment holding sets, owned by the node's
// EdgeNode so that it goes with the node. If another write made it first,
// jsonPatch (the JSON patch of the batch) is applied to it.
func (w *Writer) create(ctx context.Context, node string, sets map[string]*edgev1alpha1.AssignedService, jsonPatch []byte) error {
	n := &edgev1alpha1.EdgeNode{}
	if err := w.c.Get(ctx, types.NamespacedName{Name: node}, n); err != nil {
		return err
	}
	services := make(map[string]edgev1alpha1.AssignedService, len(sets))
	for key, e := range sets {
		services[key] = *e
	}
	a := &edgev1alpha1.NodeAssignment{
		ObjectMeta: metav1.ObjectMeta{Name: node, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: edgev1alpha1.GroupVersion.String(), Kind: "EdgeNode", Name: n.Name, UID: n.UID, Controller: ptr.To(true),
		}}},
		Spec: edgev1alpha1.NodeAssignmentSpec{Services: services},
	}
	err := w.c.Create(ctx, a, client.FieldOwner(patch.FieldOwner))
	if apierrors.IsAlreadyExists(err) {
		return w.patch(ctx, node, types.JSONPatchType, jsonPatch)
	}
	return err
}

// pointerEscape escapes a key for a JSON pointer (RFC 6901).
func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
