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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// health is the node's view of its container engine, as the kubelet's
// runtime health check feeds its node's Ready: probed every interval, and
// at once after a call that failed. While the engine is down the loop
// makes no other call to it (no storm of errors), and reports the node's
// containers in an unknown state.
type health struct {
	outage
	probed    bool
	changedAt time.Time
	// message is the error that took the engine down: the condition keeps
	// it, so that a changing error text costs no report of its own.
	message   string
	nextProbe time.Time
	interval  time.Duration
}

func newHealth(interval time.Duration, log func(string, ...any)) *health {
	return &health{outage: outage{what: "Container runtime", log: log}, interval: interval}
}

// ready says whether the engine answered its last probe.
func (h *health) ready() bool { return h.probed && !h.down }

// suspect makes the next step probe at once: a call just failed.
func (h *health) suspect(now time.Time) { h.nextProbe = now }

// probe pings the engine when a probe is due; it says whether the engine's
// state changed (went down, came back, or was first seen).
func (h *health) probe(ctx context.Context, rt Runtime, now time.Time) bool {
	if now.Before(h.nextProbe) {
		return false
	}
	h.nextProbe = now.Add(h.interval)
	pctx, cancel := context.WithTimeout(ctx, min(h.interval, probeTimeout))
	err := rt.Ping(pctx)
	cancel()
	if ctx.Err() != nil {
		return false
	}
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
	if !h.probed {
		return nil
	}
	c := &metav1.Condition{Type: edgev1alpha1.ConditionRuntimeReady, Status: metav1.ConditionTrue,
		Reason: edgev1alpha1.ReasonRuntimeReachable, Message: "The container runtime answers.", LastTransitionTime: metav1.NewTime(h.changedAt.Truncate(time.Second))}
	if h.down {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, edgev1alpha1.ReasonRuntimeUnreachable, truncate(h.message, 1024)
	}
	return c
}
