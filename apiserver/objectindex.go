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
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// objectIndex maps keys to the informer's own objects, kept current from
// its events. A lookup returns pointers into the cache: a cached List
// would copy every match into a list first, which cost the container and
// record lists a third of their time. The objects are shared: read only.
type objectIndex[T client.Object] struct {
	keys  func(T) []string
	mu    sync.RWMutex
	byKey map[string]map[string]T // key -> namespace/name -> object
	keyed map[string][]string     // namespace/name -> its keys
	byID  map[string]T            // namespace/name -> object, if it has keys
}

func newObjectIndex[T client.Object](keys func(T) []string) *objectIndex[T] {
	return &objectIndex[T]{keys: keys, byKey: map[string]map[string]T{}, keyed: map[string][]string{}, byID: map[string]T{}}
}

// get returns the objects under key, in no order.
func (x *objectIndex[T]) get(key string) []T {
	x.mu.RLock()
	defer x.mu.RUnlock()
	objs := x.byKey[key]
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		out = append(out, o)
	}
	return out
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
	id := o.GetNamespace() + "/" + o.GetName()
	keys := x.keys(o)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
	for _, k := range keys {
		if x.byKey[k] == nil {
			x.byKey[k] = map[string]T{}
		}
		x.byKey[k][id] = o
	}
	if len(keys) > 0 {
		x.keyed[id] = slices.Clone(keys)
		x.byID[id] = o
	}
}

func (x *objectIndex[T]) remove(o client.Object) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(o.GetNamespace() + "/" + o.GetName())
}

func (x *objectIndex[T]) removeLocked(id string) {
	for _, k := range x.keyed[id] {
		delete(x.byKey[k], id)
		if len(x.byKey[k]) == 0 {
			delete(x.byKey, k)
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
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if t, ok := informerObject[T](o); ok {
				x.set(t)
			}
		},
		UpdateFunc: func(_, o any) {
			if t, ok := informerObject[T](o); ok {
				x.set(t)
			}
		},
		DeleteFunc: func(o any) {
			if t, ok := informerObject[T](o); ok {
				x.remove(t)
			}
		},
	}
}
