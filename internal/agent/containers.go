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

package agent

import (
	"context"
	"errors"
	"maps"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// containerCache is the node's view of its engine's containers, kept by
// one goroutine as the kubelet's PLEG keeps its pods: it subscribes to
// the engine's events and inspects each container they name, and lists
// everything when the stream starts or breaks and every ResyncInterval.
// Workers and the reporter read it without calling the engine; each
// change wakes the reporter and the worker of the container's instance.
type containerCache struct {
	s  *node
	mu sync.Mutex
	// byID is what the engine last showed, by runtime id; stats are the
	// last stats of running containers.
	byID  map[string]*cached
	stats map[string]Stats
	// signalled are the figures as of the last time they asked for a
	// report, at signalledAt.
	signalled   map[string]Stats
	signalledAt time.Time
	// seq orders refreshes: a list forgets only the containers not
	// refreshed since it began, not one a worker just created.
	seq uint64
	// kick makes the cache subscribe and list anew: the engine went down
	// or came back.
	kick chan struct{}
	// listed says the cache has listed the engine since it last came up:
	// until then a missing container is not known to be missing, and no
	// worker acts.
	listed atomic.Bool
}

type cached struct {
	c   *Container
	seq uint64
}

func newContainerCache(s *node) *containerCache {
	return &containerCache{s: s, byID: map[string]*cached{}, stats: map[string]Stats{}, kick: make(chan struct{}, 1)}
}

func (cc *containerCache) runtimeUp() { cc.poke() }

// runtimeDown drops the figures: a stopped engine's are not known.
func (cc *containerCache) runtimeDown() {
	cc.listed.Store(false)
	cc.mu.Lock()
	clear(cc.stats)
	clear(cc.signalled)
	cc.mu.Unlock()
	cc.poke()
}

func (cc *containerCache) poke() {
	select {
	case cc.kick <- struct{}{}:
	default:
	}
}

// run follows the engine while it answers.
func (cc *containerCache) run(ctx context.Context) {
	s := cc.s
	for ctx.Err() == nil {
		if !s.health.ready() {
			select {
			case <-ctx.Done():
			case <-cc.kick:
			}
			continue
		}
		// Subscribe before listing, so that no change falls between the two.
		ectx, stop := context.WithCancel(ctx)
		events := s.rt.Events(ectx)
		next := s.o.Clock.Now() // list at once
	follow:
		for ctx.Err() == nil {
			if now := s.o.Clock.Now(); !now.Before(next) {
				next = now.Add(s.o.ResyncInterval)
				if err := cc.relist(ctx); err != nil {
					s.health.suspect()
					s.o.Log.V(1).Info("Listing the runtime's containers failed", "node", s.Name, "error", err.Error())
					next = now.Add(time.Second)
				} else if !cc.listed.Swap(true) {
					s.poke() // the workers may act now
				}
			}
			select {
			case <-ctx.Done():
			case <-cc.kick:
				break follow
			case id, ok := <-events:
				if !ok {
					// The stream broke: subscribe again a second later.
					select {
					case <-ctx.Done():
					case <-s.o.Clock.After(time.Second):
					}
					break follow
				}
				cc.refresh(ctx, id)
			case <-s.o.Clock.After(next.Sub(s.o.Clock.Now())):
			}
		}
		stop()
	}
}

// relist lists the engine's containers and inspects each of this node's.
func (cc *containerCache) relist(ctx context.Context) error {
	cc.mu.Lock()
	cc.seq++
	began := cc.seq
	cc.mu.Unlock()
	var list []Container
	if err := within(ctx, engineTimeout, func(ctx context.Context) (err error) { list, err = cc.s.rt.List(ctx); return err }); err != nil {
		return err
	}
	seen := make(map[string]bool, len(list))
	for i := range list {
		if cc.foreign(&list[i]) {
			continue
		}
		seen[list[i].ID] = true
		cc.refresh(ctx, list[i].ID)
	}
	cc.mu.Lock()
	var gone []*Container
	for id, k := range cc.byID {
		if !seen[id] && k.seq < began {
			gone = append(gone, k.c)
		}
	}
	cc.mu.Unlock()
	for _, c := range gone {
		cc.remove(c.ID)
	}
	return nil
}

// foreign is a container another node's agent created on a shared engine:
// neither reported nor touched here.
func (cc *containerCache) foreign(c *Container) bool {
	n, ok := c.Labels[LabelNode]
	return ok && n != cc.s.Name
}

// refresh inspects one container; it returns what the cache holds of it
// then: nil when it is gone or belongs to another node.
func (cc *containerCache) refresh(ctx context.Context, id string) *Container {
	s := cc.s
	var c Container
	err := within(ctx, engineTimeout, func(ctx context.Context) (err error) { c, err = s.rt.Inspect(ctx, id); return err })
	if errors.Is(err, ErrNotFound) {
		cc.remove(id)
		return nil
	}
	if err != nil {
		s.health.suspect()
		s.o.Log.V(1).Info("Inspecting a container failed", "node", s.Name, "container", id, "error", err.Error())
		cc.mu.Lock()
		defer cc.mu.Unlock()
		if k := cc.byID[id]; k != nil {
			return k.c
		}
		return nil
	}
	if cc.foreign(&c) {
		return nil
	}
	cc.mu.Lock()
	cc.seq++
	old := cc.byID[c.ID]
	changed := old == nil || !reflect.DeepEqual(*old.c, c)
	if changed {
		cc.byID[c.ID] = &cached{c: &c, seq: cc.seq}
	} else {
		old.seq = cc.seq
		c = *old.c
	}
	if c.State != edgev1alpha1.ContainerRunning {
		delete(cc.stats, c.ID)
	}
	cc.mu.Unlock()
	if changed {
		cc.changed(c.TaskID())
	}
	return &c
}

// forget drops a container that is gone.
func (cc *containerCache) remove(id string) {
	cc.mu.Lock()
	k, ok := cc.byID[id]
	if ok {
		delete(cc.byID, id)
		delete(cc.stats, id)
	}
	cc.mu.Unlock()
	if ok {
		cc.changed(k.c.TaskID())
	}
}

func (cc *containerCache) changed(task string) {
	cc.s.reporter.changed()
	if task != "" {
		cc.s.workers.poke(task)
	}
}

// ofTask returns the containers of one instance.
func (cc *containerCache) ofTask(task string) []*Container {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	var out []*Container
	for _, k := range cc.byID {
		if k.c.TaskID() == task {
			out = append(out, k.c)
		}
	}
	return out
}

// tasks returns the instances that have containers.
func (cc *containerCache) tasks() map[string]bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	out := map[string]bool{}
	for _, k := range cc.byID {
		if t := k.c.TaskID(); t != "" {
			out[t] = true
		}
	}
	return out
}

// snapshot returns every container and the figures of the running ones.
// The containers are the cache's own: read them, never change them.
func (cc *containerCache) snapshot() ([]*Container, map[string]Stats) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cs := make([]*Container, 0, len(cc.byID))
	for _, k := range cc.byID {
		cs = append(cs, k.c)
	}
	stats := make(map[string]Stats, len(cc.stats))
	for id, st := range cc.stats {
		stats[id] = st
	}
	return cs, stats
}

// running returns the ids of edgeplane's running containers.
func (cc *containerCache) running() []string {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	var ids []string
	for id, k := range cc.byID {
		if k.c.State == edgev1alpha1.ContainerRunning && k.c.TaskID() != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// merge keeps the figures of containers that still run. It asks for a
// report when a container has its first figures; when a container's
// figures moved past their thresholds (figuresMoved) and figures last
// asked for one FiguresInterval ago or more; or when they have not asked
// for one in figureRefresh. Moving figures cost a node at most a write
// per FiguresInterval, steady ones none (docs/design/0016-agent-in-parts.md). A
// report for any other change takes the latest figures along.
func (cc *containerCache) merge(stats map[string]Stats, now time.Time) {
	cc.mu.Lock()
	for id := range cc.stats {
		if k := cc.byID[id]; k == nil || k.c.State != edgev1alpha1.ContainerRunning {
			delete(cc.stats, id)
		}
	}
	refresh := !now.Before(cc.signalledAt.Add(figureRefresh))
	first, moved := false, false
	for id, st := range stats {
		if k := cc.byID[id]; k != nil && k.c.State == edgev1alpha1.ContainerRunning {
			cc.stats[id] = st
			old, ok := cc.signalled[id]
			first = first || !ok
			moved = moved || ok && figuresMoved(old, st)
		}
	}
	paced := now.Before(cc.signalledAt.Add(cc.s.o.FiguresInterval))
	if !refresh && !first && (!moved || paced) {
		cc.mu.Unlock()
		return
	}
	cc.signalled, cc.signalledAt = maps.Clone(cc.stats), now
	cc.mu.Unlock()
	cc.s.reporter.changed()
}

// figureRefresh is how stale reported figures may grow on a steady node.
const figureRefresh = 5 * time.Minute

// figuresMoved says whether a container's figures moved enough since a to
// be worth a report: 5 points of CPU, 10 % of memory or disk use (and at
// least 1 MiB), a limit, or figures that came or went.
func figuresMoved(a, b Stats) bool {
	if (a.CPU == nil) != (b.CPU == nil) || (a.Memory == nil) != (b.Memory == nil) || (a.Size == nil) != (b.Size == nil) {
		return true
	}
	if a.CPU != nil && math.Abs(a.CPU.Total-b.CPU.Total) >= 5 {
		return true
	}
	if a.Memory != nil && (a.Memory.Limit != b.Memory.Limit || bytesMoved(a.Memory.Usage, b.Memory.Usage)) {
		return true
	}
	return a.Size != nil && (a.Size.Limit != b.Size.Limit || bytesMoved(a.Size.Usage, b.Size.Usage))
}

// bytesMoved says whether a byte count changed by 10 % of a, and by 1 MiB.
func bytesMoved(a, b int64) bool {
	d := b - a
	if d < 0 {
		d = -d
	}
	return d >= 1<<20 && d*10 >= a
}
