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
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// creationOrder keeps the names of every object of a list in its order
// (creation time, then name), current from the informer's events, so that
// a page of the list is a slice of it: no request sorts or copies every
// object. The node list and the service list each keep one.
type creationOrder struct {
	mu   sync.RWMutex
	keys []orderKey
}

type orderKey struct {
	created time.Time
	name    string
	lower   string // the name in lower case, for the name filter
}

func (a orderKey) compare(b orderKey) int {
	if c := a.created.Compare(b.created); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

func keyOf(o client.Object) orderKey {
	return orderKey{created: o.GetCreationTimestamp().Time, name: o.GetName(), lower: strings.ToLower(o.GetName())}
}

// set adds an object; adding it again (a relist) keeps one entry.
func (o *creationOrder) set(obj client.Object) {
	k := keyOf(obj)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.removeLocked(k.name)
	i, _ := slices.BinarySearchFunc(o.keys, k, orderKey.compare)
	o.keys = slices.Insert(o.keys, i, k)
}

func (o *creationOrder) remove(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.removeLocked(name)
}

func (o *creationOrder) removeLocked(name string) {
	if i := slices.IndexFunc(o.keys, func(k orderKey) bool { return k.name == name }); i >= 0 {
		o.keys = slices.Delete(o.keys, i, i+1)
	}
}

// list returns the names of page p of the list, filtered by the
// request's name parameter (a case-insensitive substring), and how many
// match in all.
func (o *creationOrder) list(q url.Values, p page) ([]string, int) {
	start := 0
	if p.size > 0 {
		start = (p.num - 1) * p.size
	}
	return o.page(strings.ToLower(q.Get("name")), start, p.size)
}

// page returns the names from the start-th on, at most size of them
// (size -1: all), whose lower-case name contains filter, and how many
// match in all.
func (o *creationOrder) page(filter string, start, size int) ([]string, int) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if filter == "" {
		total := len(o.keys)
		end := total
		if size >= 0 {
			end = min(total, start+size)
		}
		out := make([]string, 0, max(0, end-start))
		for i := start; i < end; i++ {
			out = append(out, o.keys[i].name)
		}
		return out, total
	}
	var out []string
	total := 0
	for _, k := range o.keys {
		if !strings.Contains(k.lower, filter) {
			continue
		}
		if total >= start && (size < 0 || len(out) < size) {
			out = append(out, k.name)
		}
		total++
	}
	return out, total
}

// orderHandler keeps an order current from an informer of T, for the
// objects keep takes (nil: all). A name and a creation time never change,
// so updates move nothing.
func orderHandler[T client.Object](o *creationOrder, keep func(T) bool) toolscache.ResourceEventHandler {
	add := func(obj T) {
		if keep == nil || keep(obj) {
			o.set(obj)
		}
	}
	return eventHandler(add, nil, func(obj T) { o.remove(obj.GetName()) })
}
