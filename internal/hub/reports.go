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
	"bytes"
	"context"
	"sync"
)

// reports coalesces each node's status reports into one write at a time.
// An agent whose call outlives its deadline tries again with the same
// report: that retry joins the write still under way instead of making
// another, and a newer report waits for it and replaces any report
// queued behind it, so a node never has more than one write in flight and
// one waiting. The writes outlive the agents' calls (bounded by
// forwardTimeout): a write the API server is about to make is not thrown
// away because the agent stopped waiting for it.
//
// At most maxForwards writes are in flight per replica: the rest wait
// here, coalescing, rather than in the API server's queues, where the
// replica is one flow of API Priority and Fairness and a fleet's
// reports beyond its queues' length are refused with 429 (7,650 of them
// when 5,000 devices first reported at once).
type reports struct {
	write func(ctx context.Context, node string, body []byte) (any, error)
	slots chan struct{}

	mu    sync.Mutex
	nodes map[string]*nodeReports
}

// nodeReports is one node's write under way and the report behind it.
type nodeReports struct {
	running, next *flight
}

// flight is one write; its callers wait on done.
type flight struct {
	body []byte
	done chan struct{}
	out  any
	err  error
}

func newReports(write func(ctx context.Context, node string, body []byte) (any, error)) *reports {
	return &reports{write: write, slots: make(chan struct{}, maxForwards), nodes: map[string]*nodeReports{}}
}

// maxForwards bounds a replica's report writes in flight.
const maxForwards = 32

// submit queues body as node's latest report and returns the write that
// will carry it (or a report that supersedes it).
func (r *reports) submit(node string, body []byte) *flight {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.nodes[node]
	if n == nil {
		n = &nodeReports{}
		r.nodes[node] = n
	}
	switch {
	case n.running == nil:
		n.running = &flight{body: body, done: make(chan struct{})}
		go r.run(node, n.running)
		return n.running
	case bytes.Equal(n.running.body, body) && n.next == nil:
		return n.running
	case bytes.Equal(n.running.body, body):
		// A late retry of the write under way: what queued behind it
		// is newer.
	case n.next == nil:
		n.next = &flight{body: body, done: make(chan struct{})}
	default:
		// The newer report is what the node holds now; whoever waits
		// for the older one is answered by it.
		n.next.body = body
	}
	return n.next
}

// run writes f, then whatever queued behind it.
func (r *reports) run(node string, f *flight) {
	for f != nil {
		r.slots <- struct{}{}
		ctx, cancel := context.WithTimeout(context.Background(), forwardTimeout)
		f.out, f.err = r.write(ctx, node, f.body)
		cancel()
		<-r.slots
		close(f.done)
		r.mu.Lock()
		n := r.nodes[node]
		n.running, n.next, f = n.next, nil, n.next
		if f == nil {
			delete(r.nodes, node)
		}
		r.mu.Unlock()
	}
}
