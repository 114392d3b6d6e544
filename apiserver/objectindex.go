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
	"slices"
	"strings"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// objectIndex maps keys to the informer's own objects, kept current from
// its events, each key's objects in an order. A lookup returns pointers
// into the cache, already in order: a cached List would copy every match
// into a list first, and a page would then sort them all. The objects are
// shared, and so are the lists, which are replaced, never changed: read
// only.
type objectIndex[T client.Object] struct {
	keys    func(T) []string
	compare func(a, b T) int
	mu      sync.RWMutex
	byKey   map[string][]T      // key -> its objects, in order
	keyed   map[string][]string // namespace/name -> its keys
	byID    map[string]T        // namespace/name -> object, if it has keys
}

// newObjectIndex indexes objects under their keys, each key's objects in
// the order of compare (nil: by namespace and name).
func newObjectIndex[T client.Object](keys func(T) []string, compare func(a, b T) int) *objectIndex[T] {
	if compare == nil {
		compare = func(a, b T) int { return strings.Compare(objectID(a), objectID(b)) }
	}
	return &objectIndex[T]{keys: keys, compare: compare, byKey: map[string][]T{}, keyed: map[string][]string{}, byID: map[string]T{}}
}

func objectID(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// get returns the objects under key, in order. The list is shared: read
// only.
func (x *objectIndex[T]) get(key string) []T {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.byKey[key]
}

// object returns the indexed object of that namespace and name, if it has
// any key.
func (x *objectIndex[T]) object(namespace, name string) (T, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	o, ok := x.byID[namespace+"/"+name]
	return o, ok
}

func (x *objectIndex[T]) set(o T) {
	id := objectID(o)
	keys := x.keys(o)
	slices.Sort(keys)
	keys = slices.Compact(keys) // one entry under a key given twice
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
	for _, k := range keys {
		list := x.byKey[k]
		i, _ := slices.BinarySearchFunc(list, o, x.compare)
		x.byKey[k] = append(append(append(make([]T, 0, len(list)+1), list[:i]...), o), list[i:]...)
	}
	if len(keys) > 0 {
		x.keyed[id] = slices.Clone(keys)
		x.byID[id] = o
	}
}

func (x *objectIndex[T]) remove(o client.Object) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(objectID(o))
}

func (x *objectIndex[T]) removeLocked(id string) {
	old, ok := x.byID[id]
	if !ok {
		return
	}
	for _, k := range x.keyed[id] {
		list := x.byKey[k]
		i := slices.IndexFunc(list, func(o T) bool { return any(o) == any(old) })
		switch {
		case i < 0:
		case len(list) == 1:
			delete(x.byKey, k)
		default:
			x.byKey[k] = append(append(make([]T, 0, len(list)-1), list[:i]...), list[i+1:]...)
		}
	}
	delete(x.keyed, id)
	delete(x.byID, id)
}

// informerObject is the object an informer event carries, unwrapping the
// final state of a delete the informer missed.
func informerObject[T any](o any) (T, bool) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	t, ok := o.(T)
	return t, ok
}

// handler keeps the index current from an informer of T.
func (x *objectIndex[T]) handler() toolscache.ResourceEventHandler {
	return eventHandler(x.set, x.set, func(t T) { x.remove(t) })
}

// eventHandler applies an informer's events to one of the facade's
// indexes: add, update (nil when updates change nothing it keeps) and
// remove, with the final state of a delete the informer missed unwrapped.
func eventHandler[T any](add, update, remove func(T)) toolscache.ResourceEventHandler {
	h := toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if t, ok := informerObject[T](o); ok {
				add(t)
			}
		},
		DeleteFunc: func(o any) {
			if t, ok := informerObject[T](o); ok {
				remove(t)
			}
		},
	}
	if update != nil {
		h.UpdateFunc = func(_, o any) {
			if t, ok := informerObject[T](o); ok {
				update(t)
			}
		}
	}
	return h
}
