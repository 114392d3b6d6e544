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
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/edgeplane/edgeplane/internal/shared/unreachable"
)

// outage follows one thing the node depends on (the API server, the
// container engine) through its failures, and logs one line when it goes
// down, one at most every outageLogEvery while it stays down, and one when
// it comes back: never one per attempt.
type outage struct {
	what    string
	down    bool
	since   time.Time
	err     string
	failed  int // attempts failed since it went down
	nextLog time.Time
	log     func(msg string, kv ...any)
}

// outageLogEvery bounds the "still down" lines of one outage.
const outageLogEvery = time.Minute

// fail notes a failed attempt; it says whether this one took it down.
func (o *outage) fail(now time.Time, err error) bool {
	o.err = err.Error()
	o.failed++
	if !o.down {
		o.down, o.since, o.nextLog = true, now, now.Add(outageLogEvery)
		o.log(o.what+" went down", "error", o.err)
		return true
	}
	if !now.Before(o.nextLog) {
		o.nextLog = now.Add(outageLogEvery)
		o.log(o.what+" still down", "for", now.Sub(o.since).Round(time.Second).String(), "attempts", o.failed, "error", o.err)
	}
	return false
}

// ok notes an attempt that succeeded; it says whether this one brought it back.
func (o *outage) ok(now time.Time) bool {
	if !o.down {
		return false
	}
	o.log(o.what+" came back", "after", now.Sub(o.since).Round(time.Second).String(), "attempts", o.failed)
	o.down, o.failed, o.err = false, 0, ""
	return true
}

// link is the node's link to the API server, shared by the lease keeper
// and the reporter. It logs one outage for both, and gives each a back-off
// of its own: while a writer's calls fail, it tries again after a back-off
// that doubles from linkRetryBase to max (the node's renew interval) with
// jitter, so that a fleet cut off together does not come back in one
// storm. It never waits longer than the node beats: with a longer wait, a
// cut shorter than the grace period ended in a node declared offline (a
// 15 s cut, a 30 s cap: back after 41 s). A writer waits on its own
// failures alone: the hub forwards a report to the API server, which may
// be too busy to take it (429, 5xx, a timeout) while the hub answers the
// heartbeat from memory, and a renewal held back by the reports' back-off
// was late for nothing.
type link struct {
	mu sync.Mutex
	outage
	writers []*writer
	max     time.Duration
}

// writer is one writer's way onto the link: its own failures, and when it
// may call again.
type writer struct {
	l       *link
	failed  int // calls failed since its last success
	retry   wait.Backoff
	retryAt time.Time
}

const linkRetryBase = time.Second

func newLink(max time.Duration, log func(string, ...any)) *link {
	return &link{outage: outage{what: "API server link", log: log}, max: max}
}

// writer adds a writer to the link.
func (l *link) writer() *writer {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := &writer{l: l}
	l.writers = append(l.writers, w)
	return w
}

// ready says whether the writer may call the API server now.
func (w *writer) ready(now time.Time) bool {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	return !now.Before(w.retryAt)
}

// until is how long from now until the writer may call.
func (w *writer) until(now time.Time) time.Duration {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	return max(w.retryAt.Sub(now), 0)
}

// result notes the outcome of the writer's call to the API server and says
// whether the link just came back. An answer that refuses the call (403,
// 409, 422) still proves the link works; once it is back, every writer
// may call at once.
func (w *writer) result(now time.Time, err error) bool {
	l := w.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if unreachable.Is(err) {
		l.fail(now, err)
		if w.failed == 0 {
			w.retry = retryBackoff(linkRetryBase, l.max)
		}
		w.failed++
		w.retryAt = now.Add(w.retry.Step())
		return false
	}
	w.failed, w.retryAt = 0, time.Time{}
	if !l.ok(now) {
		return false
	}
	for _, o := range l.writers {
		o.failed, o.retryAt = 0, time.Time{}
	}
	return true
}

// retryBackoff is the wait before each attempt while attempts fail: base
// doubled per failure up to max, each wait drawn from the upper half of
// its step ("equal jitter": from half of it, with up to as much again).
func retryBackoff(base, max time.Duration) wait.Backoff {
	return wait.Backoff{Duration: base / 2, Factor: 2, Jitter: 1, Steps: math.MaxInt32, Cap: max / 2}
}
