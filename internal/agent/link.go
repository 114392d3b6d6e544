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
	"math/rand/v2"
	"sync"
	"time"

	"github.com/edgeplane/edgeplane/internal/unreachable"
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

// link is the node's link to the API server. While it is down, writes are
// tried again after a back-off that doubles from linkRetryBase to max (the
// node's renew interval) with jitter, so that a fleet cut off together
// does not come back in one storm. It never waits longer than the node
// beats: with a longer wait, a cut shorter than the grace period ended
// in a node declared offline (a 15 s cut, a 30 s cap: back after 41 s).
type link struct {
	mu sync.Mutex
	outage
	retryAt time.Time
	max     time.Duration
	rnd     *rand.Rand
}

const linkRetryBase = time.Second

func newLink(seed uint64, max time.Duration, log func(string, ...any)) *link {
	return &link{outage: outage{what: "API server link", log: log}, max: max, rnd: rand.New(rand.NewPCG(seed, 7))}
}

// ready says whether a call to the API server may be made now.
func (l *link) ready(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.down || !now.Before(l.retryAt)
}

// until is how long from now until a call may be made.
func (l *link) until(now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down {
		return 0
	}
	return l.retryAt.Sub(now)
}

// result notes the outcome of a call to the API server and says whether
// the link just came back. An answer that refuses the call (403, 409, 422)
// still proves the link works.
func (l *link) result(now time.Time, err error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if unreachable.Is(err) {
		l.fail(now, err)
		l.retryAt = now.Add(backoff(l.failed, linkRetryBase, l.max, l.rnd))
		return false
	}
	return l.ok(now)
}

// backoff is the wait before attempt n+1 after n failures: base doubled
// per failure up to max, then drawn from its upper half ("equal jitter").
func backoff(n int, base, max time.Duration, rnd *rand.Rand) time.Duration {
	d := max
	if n < 30 && base<<(n-1) < max {
		d = base << (n - 1)
	}
	return d/2 + time.Duration(rnd.Int64N(int64(d/2)+1))
}
