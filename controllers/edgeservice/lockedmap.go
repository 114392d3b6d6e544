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

import "sync"

// lockedMap is a map that reconciles and event handlers share; its zero
// value is empty and ready. A nil one, of a reconciler built without
// SetupWithManager, holds nothing.
type lockedMap[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

func (l *lockedMap[K, V]) get(k K) (V, bool) {
	if l == nil {
		var zero V
		return zero, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.m[k]
	return v, ok
}

func (l *lockedMap[K, V]) set(k K, v V) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[K]V{}
	}
	l.m[k] = v
}

func (l *lockedMap[K, V]) drop(k K) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, k)
}

// keys lists the keys, in no order.
func (l *lockedMap[K, V]) keys() []K {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]K, 0, len(l.m))
	for k := range l.m {
		out = append(out, k)
	}
	return out
}
