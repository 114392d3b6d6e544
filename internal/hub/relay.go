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

package hub

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// relay hands each change of a NodeAssignment, as the hub's one informer
// sees it, to the watches its node holds open at this replica: one watch
// of kube-apiserver serves the whole fleet.
type relay struct {
	mu       sync.Mutex
	watchers map[string]map[*watcher]struct{}
	metrics  *metrics
}

// watcher is one open watch of a node's assignment.
type watcher struct {
	events chan relayEvent
	// gone is closed when the relay drops the watch: it fell behind, or
	// its node was revoked. The client watches again and is sent the
	// assignment as it is then.
	gone chan struct{}
	once sync.Once
}

type relayEvent struct {
	typ watch.EventType
	obj *edgev1alpha1.NodeAssignment
	at  time.Time
}

// watchBuffer is how many changes a watch may fall behind before it is
// dropped; a node's assignment changes a few times per rollout.
const watchBuffer = 64

func newRelay(m *metrics) *relay {
	return &relay{watchers: map[string]map[*watcher]struct{}{}, metrics: m}
}

// add opens a watch of node's assignment.
func (r *relay) add(node string) *watcher {
	w := &watcher{events: make(chan relayEvent, watchBuffer), gone: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watchers[node] == nil {
		r.watchers[node] = map[*watcher]struct{}{}
	}
	r.watchers[node][w] = struct{}{}
	r.metrics.watches.Inc()
	return w
}

// remove closes a watch.
func (r *relay) remove(node string, w *watcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.watchers[node][w]; ok {
		delete(r.watchers[node], w)
		if len(r.watchers[node]) == 0 {
			delete(r.watchers, node)
		}
		r.metrics.watches.Dec()
	}
	w.drop()
}

func (w *watcher) drop() { w.once.Do(func() { close(w.gone) }) }

// cut drops every watch of node.
func (r *relay) cut(node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for w := range r.watchers[node] {
		w.drop()
	}
}

// publish hands an event to the watches of its node, never blocking the
// informer: a watch that is full is dropped.
func (r *relay) publish(typ watch.EventType, obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	a, ok := obj.(*edgev1alpha1.NodeAssignment)
	if !ok {
		return
	}
	e := relayEvent{typ: typ, obj: a, at: time.Now()}
	r.mu.Lock()
	defer r.mu.Unlock()
	for w := range r.watchers[a.Name] {
		select {
		case w.events <- e:
		default:
			w.drop()
		}
	}
}

// handler is the informer's event handler.
func (r *relay) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.publish(watch.Added, obj) },
		UpdateFunc: func(_, obj any) { r.publish(watch.Modified, obj) },
		DeleteFunc: func(obj any) { r.publish(watch.Deleted, obj) },
	}
}
