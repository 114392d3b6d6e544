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

// Package heartbeat is the liveness logic of a heartbeat gateway, chosen
// over Lease renewals (docs/design/0020-liveness-as-transitions.md): agents send
// heartbeats to a gateway that keeps liveness in memory, and only a
// node's transitions (online, offline) are written to the API server.
// It is pure: the caller gives the times, so a simulation replays a trace
// of any length at once.
package heartbeat

import (
	"container/heap"
	"time"
)

// Gateway holds the last heartbeat of every node. A node is online from
// its first heartbeat until grace passes without one.
type Gateway struct {
	grace    time.Duration
	last     map[string]time.Time
	online   map[string]bool
	deadline deadlines
}

// NewGateway returns a gateway that turns a node offline grace after its
// last heartbeat, as the manager's --node-grace-period does with Leases.
func NewGateway(grace time.Duration) *Gateway {
	return &Gateway{grace: grace, last: map[string]time.Time{}, online: map[string]bool{}}
}

// Beat records a heartbeat of node at t, and says whether the node came
// online with it: a transition to write.
func (g *Gateway) Beat(node string, t time.Time) bool {
	g.last[node] = t
	heap.Push(&g.deadline, deadline{at: t.Add(g.grace), node: node})
	if g.online[node] {
		return false
	}
	g.online[node] = true
	return true
}

// Expire returns the nodes whose grace ran out by now, which turn
// offline: transitions to write.
func (g *Gateway) Expire(now time.Time) []string {
	var off []string
	for g.deadline.Len() > 0 && !g.deadline[0].at.After(now) {
		d := heap.Pop(&g.deadline).(deadline)
		// A later heartbeat pushed a later deadline: this one is stale.
		if !g.online[d.node] || g.last[d.node].Add(g.grace).After(now) {
			continue
		}
		// What it keeps is the nodes online: memory follows the fleet
		// connected, not every node ever seen.
		delete(g.online, d.node)
		delete(g.last, d.node)
		off = append(off, d.node)
	}
	return off
}

// Online says whether node is online.
func (g *Gateway) Online(node string) bool { return g.online[node] }

// Last is the last heartbeat of a node online.
func (g *Gateway) Last(node string) (time.Time, bool) {
	t, ok := g.last[node]
	return t, ok && g.online[node]
}

// Connected is how many nodes are online.
func (g *Gateway) Connected() int { return len(g.online) }

type deadline struct {
	at   time.Time
	node string
}

// deadlines is a min-heap of deadlines by time.
type deadlines []deadline

func (d deadlines) Len() int           { return len(d) }
func (d deadlines) Less(i, j int) bool { return d[i].at.Before(d[j].at) }
func (d deadlines) Swap(i, j int)      { d[i], d[j] = d[j], d[i] }
func (d *deadlines) Push(x any)        { *d = append(*d, x.(deadline)) }
func (d *deadlines) Pop() any {
	old := *d
	x := old[len(old)-1]
	*d = old[:len(old)-1]
	return x
}
