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
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/text"
)

// health is the node's view of its container engine, as the kubelet's
// runtime health check feeds its node's Ready: probed every interval on a
// goroutine of its own, and at once after a call that failed. While the
// engine is down no part makes another call to it (no storm of errors),
// and the node's containers are reported in an unknown state.
type health struct {
	mu sync.Mutex
	outage
	probed    bool
	changedAt time.Time
	// message is the error that took the engine down: the condition keeps
	// it, so that a changing error text costs no report of its own.
	message  string
	interval time.Duration
	suspects chan struct{}
}

func newHealth(interval time.Duration, log func(string, ...any)) *health {
	return &health{outage: outage{what: "Container runtime", log: log}, interval: interval, suspects: make(chan struct{}, 1)}
}

// ready says whether the engine answered its last probe.
func (h *health) ready() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.probed && !h.down
}

// probedOnce says whether the engine has been probed at all.
func (h *health) probedOnce() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.probed
}

// suspect asks for a probe at once: a call just failed.
func (h *health) suspect() {
	select {
	case h.suspects <- struct{}{}:
	default:
	}
}

// probe pings the engine; it says whether the engine's state changed
// (went down, came back, or was first seen).
func (h *health) probe(ctx context.Context, rt Runtime, now time.Time) bool {
	pctx, cancel := context.WithTimeout(ctx, min(h.interval, probeTimeout))
	err := rt.Ping(pctx)
	cancel()
	if ctx.Err() != nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	first := !h.probed
	h.probed = true
	var changed bool
	if err != nil {
		changed = h.fail(now, err)
	} else {
		changed = h.ok(now)
	}
	if changed || first {
		h.changedAt = now
		if err != nil {
			h.message = err.Error()
		}
		return true
	}
	return false
}

// probeTimeout bounds one probe.
const probeTimeout = 3 * time.Second

// condition is the RuntimeReady condition the agent reports; nil before
// the first probe.
func (h *health) condition() *metav1.Condition {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.probed {
		return nil
	}
	c := &metav1.Condition{Type: edgev1alpha1.ConditionRuntimeReady, Status: metav1.ConditionTrue,
		Reason: edgev1alpha1.ReasonRuntimeReachable, Message: "The container runtime answers.", LastTransitionTime: metav1.NewTime(h.changedAt.Truncate(time.Second))}
	if h.down {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, edgev1alpha1.ReasonRuntimeUnreachable, text.Cut(h.message, 1024)
	}
	return c
}

// probe is the node's prober: it pings the engine every interval, or at
// once when a call failed (at most once a second then), and acts on a
// change: while the engine is down nothing is asked of it and its
// containers' state is unknown; when it answers again the node reads its
// info and the container cache lists every container afresh (containers
// it lost are then created again).
func (s *node) probe(ctx context.Context) {
	for ctx.Err() == nil {
		if s.health.probe(ctx, s.rt, s.o.Clock.Now()) {
			s.runtimeChanged(ctx)
		} else if s.health.ready() && !s.infoRead.Load() {
			// The engine answers, but what it is could not be read
			// when it came up (a call cut on a busy device): read it
			// now, or the node would be reported without it for good.
			s.readInfo(ctx)
		}
		select {
		case <-ctx.Done():
		case <-s.o.Clock.After(s.health.interval):
		case <-s.health.suspects:
			select {
			case <-ctx.Done():
			case <-s.o.Clock.After(min(s.health.interval, time.Second)):
			}
		}
	}
}

func (s *node) runtimeChanged(ctx context.Context) {
	s.reporter.changed()
	if !s.health.ready() {
		s.cache.runtimeDown()
		return
	}
	s.readInfo(ctx)
	s.cache.runtimeUp()
	s.poke()
}

// readInfo reads what the engine says of the node; on failure the
// prober tries again at once, and at each probe until it is read.
func (s *node) readInfo(ctx context.Context) {
	var info RuntimeInfo
	err := within(ctx, probeTimeout, func(ctx context.Context) (err error) { info, err = s.rt.Info(ctx); return err })
	if err != nil {
		s.infoRead.Store(false)
		s.health.suspect()
		return
	}
	s.setInfo(info)
	s.infoRead.Store(true)
	s.reporter.changed()
}
