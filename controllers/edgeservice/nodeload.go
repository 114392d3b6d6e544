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
	"sync"

	"k8s.io/apimachinery/pkg/types"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// nodeLoad counts the instances placed on each node, by service: what
// placement reads to keep within a node's capacity. A reconcile sets its
// service's instances as soon as it wrote them (the cache brings them
// later); the assignments' watch sets each node's part as it arrives.
type nodeLoad struct {
	mu        sync.Mutex
	byService map[types.UID]map[string]int // instances of each service, by node
	count     map[string]int
}

func newNodeLoad() *nodeLoad {
	return &nodeLoad{byService: map[types.UID]map[string]int{}, count: map[string]int{}}
}

// set replaces a service's instances, on every node.
func (l *nodeLoad) set(uid types.UID, instances []edgev1alpha1.ServiceInstance) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subtract(uid)
	if len(instances) == 0 {
		return
	}
	nodes := map[string]int{}
	for _, inst := range instances {
		nodes[inst.NodeName]++
		l.count[inst.NodeName]++
	}
	l.byService[uid] = nodes
}

// setNode replaces a service's instances on one node.
func (l *nodeLoad) setNode(uid types.UID, node string, n int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	nodes := l.byService[uid]
	l.add(node, n-nodes[node])
	switch {
	case n > 0 && nodes == nil:
		l.byService[uid] = map[string]int{node: n}
	case n > 0:
		nodes[node] = n
	case nodes != nil:
		delete(nodes, node)
		if len(nodes) == 0 {
			delete(l.byService, uid)
		}
	}
}

func (l *nodeLoad) drop(uid types.UID) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subtract(uid)
}

func (l *nodeLoad) subtract(uid types.UID) {
	for node, n := range l.byService[uid] {
		l.add(node, -n)
	}
	delete(l.byService, uid)
}

func (l *nodeLoad) add(node string, d int) {
	if l.count[node] += d; l.count[node] <= 0 {
		delete(l.count, node)
	}
}

// of is how many instances are placed on a node.
func (l *nodeLoad) of(node string) int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count[node]
}
