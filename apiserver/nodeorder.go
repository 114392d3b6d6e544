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
	"time"

	toolscache "k8s.io/client-go/tools/cache"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// nodeOrder keeps the names of every node in the node list's order
// (creation time, then name), current from the informer's events, so that
// a page of the list is a slice of it: no request sorts or copies every
// node.
type nodeOrder struct {
	mu   sync.RWMutex
	keys []nodeKey
}

type nodeKey struct {
	created time.Time
	name    string
	lower   string // the name in lower case, for the name filter
}

func (a nodeKey) compare(b nodeKey) int {
	if c := a.created.Compare(b.created); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

func keyOf(n *edgev1alpha1.EdgeNode) nodeKey {
	return nodeKey{created: n.CreationTimestamp.Time, name: n.Name, lower: strings.ToLower(n.Name)}
}

// set adds a node; adding it again (a relist) keeps one entry.
func (o *nodeOrder) set(n *edgev1alpha1.EdgeNode) {
	k := keyOf(n)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.removeLocked(n.Name)
	i, _ := slices.BinarySearchFunc(o.keys, k, nodeKey.compare)
	o.keys = slices.Insert(o.keys, i, k)
}

func (o *nodeOrder) remove(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.removeLocked(name)
}

func (o *nodeOrder) removeLocked(name string) {
	if i := slices.IndexFunc(o.keys, func(k nodeKey) bool { return k.name == name }); i >= 0 {
		o.keys = slices.Delete(o.keys, i, i+1)
	}
}

// page returns the names of the nodes from the start-th on, at most size
// of them (size -1: all), whose lower-case name contains filter, and how
// many match in all.
func (o *nodeOrder) page(filter string, start, size int) ([]string, int) {
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

// handler keeps the order current from an informer of EdgeNodes. A
// node's name and creation time never change, so updates move nothing.
func (o *nodeOrder) handler() toolscache.ResourceEventHandler {
	return eventHandler(o.set, nil, func(n *edgev1alpha1.EdgeNode) { o.remove(n.Name) })
}
