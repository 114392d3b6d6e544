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
	"sync"

	"k8s.io/apimachinery/pkg/types"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// nodeLoad counts the instances placed on each node, from the services'
// statuses: as the watch delivers them, and as the reconciler writes them.
// Placement spreads by it at once; an agent's count of its containers
// follows only its next report, so a burst of new services would all land
// on the same few nodes.
type nodeLoad struct {
	mu        sync.Mutex
	byService map[types.UID][]string // the nodes of each service's instances
	count     map[string]int
}

func newNodeLoad() *nodeLoad {
	return &nodeLoad{byService: map[types.UID][]string{}, count: map[string]int{}}
}

// set records the instances of a service, replacing what it had. A nil
// load, of a reconciler built without SetupWithManager, records nothing.
func (l *nodeLoad) set(uid types.UID, instances []edgev1alpha1.ServiceInstance) {
	if l == nil {
		return
	}
	nodes := make([]string, len(instances))
	for i, inst := range instances {
		nodes[i] = inst.NodeName
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(uid)
	if len(nodes) == 0 {
		return
	}
	l.byService[uid] = nodes
	for _, n := range nodes {
		l.count[n]++
	}
}

// drop forgets a deleted service.
func (l *nodeLoad) drop(uid types.UID) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(uid)
}

func (l *nodeLoad) forget(uid types.UID) {
	for _, n := range l.byService[uid] {
		if l.count[n]--; l.count[n] == 0 {
			delete(l.count, n)
		}
	}
	delete(l.byService, uid)
}

// of is how many instances are placed on a node; nil counts none.
func (l *nodeLoad) of(node string) int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count[node]
}
