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

package apiserver

import (
	"container/heap"
	"iter"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/instances"
)

// instanceOrder keeps the instances of each service and of each node in
// the container lists' order (newest task first), current from the nodes'
// assignments' informer events. A page of one service or node is a slice
// of its list, a page of several is merged from theirs up to its end: no
// request sorts or copies every instance. A stored list is never changed,
// only replaced, so readers use it without the lock.
type instanceOrder struct {
	keep      func(namespace string) bool
	mu        sync.RWMutex
	byService map[string][]instance // service UID -> its instances
	byNode    map[string][]instance // node name -> the instances on it
}

func newInstanceOrder(keep func(namespace string) bool) *instanceOrder {
	return &instanceOrder{keep: keep, byService: map[string][]instance{}, byNode: map[string][]instance{}}
}

// compareInstances orders newest task first, then by taskId, then by
// service: a total order, so pages never overlap.
func compareInstances(x, y instance) int {
	a, b := x.inst, y.inst
	if c := b.TaskCreatedTime.Time.Compare(a.TaskCreatedTime.Time); c != 0 {
		return c
	}
	if c := strings.Compare(a.TaskID, b.TaskID); c != 0 {
		return c
	}
	return strings.Compare(string(x.svc.UID), string(y.svc.UID))
}

// ofService returns the instances of the service of that UID, in order.
func (o *instanceOrder) ofService(uid string) []instance {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.byService[uid]
}

// onNode returns the instances on the node of that name, in order.
func (o *instanceOrder) onNode(name string) []instance {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.byNode[name]
}

// assignedInstances are the instances an assignment places on its node,
// each with its service as the entry names it: a service of the entry's
// configuration, pointing into the informer's object.
func assignedInstances(a *edgev1alpha1.NodeAssignment, keep func(string) bool) []instance {
	var list []instance
	for key, e := range a.Spec.Services {
		ns, name, _ := strings.Cut(key, "/")
		if !keep(ns) {
			continue
		}
		svc := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(e.UID)},
			Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: e.Spec},
		}
		for _, inst := range instances.Of(a.Name, &e) {
			list = append(list, instance{svc: svc, inst: &inst})
		}
	}
	return list
}

// set stores a node's instances in place of what it had, in the node's
// list and in each of its services' lists.
func (o *instanceOrder) set(a *edgev1alpha1.NodeAssignment) {
	list := assignedInstances(a, o.keep)
	slices.SortFunc(list, compareInstances)
	bySvc := map[string][]instance{}
	for _, in := range list {
		bySvc[string(in.svc.UID)] = append(bySvc[string(in.svc.UID)], in)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, in := range o.byNode[a.Name] {
		if _, ok := bySvc[string(in.svc.UID)]; !ok {
			bySvc[string(in.svc.UID)] = nil // the service left the node
		}
	}
	if len(list) == 0 {
		delete(o.byNode, a.Name)
	} else {
		o.byNode[a.Name] = list
	}
	for uid, added := range bySvc {
		kept := slices.DeleteFunc(slices.Clone(o.byService[uid]), func(x instance) bool { return x.inst.NodeName == a.Name })
		merged := append(kept, added...)
		slices.SortFunc(merged, compareInstances)
		if len(merged) == 0 {
			delete(o.byService, uid)
		} else {
			o.byService[uid] = merged
		}
	}
}

// remove drops a deleted assignment's instances.
func (o *instanceOrder) remove(a *edgev1alpha1.NodeAssignment) {
	o.set(&edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{Name: a.Name}})
}

// handler keeps the order current from an informer of NodeAssignments.
func (o *instanceOrder) handler() toolscache.ResourceEventHandler {
	return eventHandler(o.set, o.set, o.remove)
}

// merged walks lists that are each in order as one list in order.
func merged(lists [][]instance) iter.Seq[instance] {
	return func(yield func(instance) bool) {
		if len(lists) == 1 {
			for _, in := range lists[0] {
				if !yield(in) {
					return
				}
			}
			return
		}
		h := make(heads, 0, len(lists))
		for _, l := range lists {
			if len(l) > 0 {
				h = append(h, l)
			}
		}
		heap.Init(&h)
		for len(h) > 0 {
			l := h[0]
			if !yield(l[0]) {
				return
			}
			if len(l) == 1 {
				heap.Pop(&h)
			} else {
				h[0] = l[1:]
				heap.Fix(&h, 0)
			}
		}
	}
}

// heads is a heap of lists by their first instance.
type heads [][]instance

func (h heads) Len() int           { return len(h) }
func (h heads) Less(i, j int) bool { return compareInstances(h[i][0], h[j][0]) < 0 }
func (h heads) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *heads) Push(x any)        { *h = append(*h, x.([]instance)) }
func (h *heads) Pop() any {
	old := *h
	l := old[len(old)-1]
	*h = old[:len(old)-1]
	return l
}
