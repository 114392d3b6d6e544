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

package soak

import (
	"slices"
	"sync"
	"time"
)

// Latencies log the answers of facade requests: when each was sent (from
// the churn's start) and how long it took. Failures (refused, 5xx, not
// the envelope) are counted apart: they have no latency a reader waited
// for, and a killed replica's refusals take no time at all.
type Latencies struct {
	mu     sync.Mutex
	ok     []latency
	failed int
}

type latency struct{ at, took time.Duration }

// Add logs one request.
func (l *Latencies) Add(at, took time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ok {
		l.failed++
		return
	}
	l.ok = append(l.ok, latency{at, took})
}

// Counts are the requests answered and failed so far.
func (l *Latencies) Counts() (ok, failed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ok), l.failed
}

// Between are the latencies of the answered requests sent in [from, to).
func (l *Latencies) Between(from, to time.Duration) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Duration
	for _, s := range l.ok {
		if s.at >= from && s.at < to {
			out = append(out, s.took)
		}
	}
	return out
}

// minLatencies is the fewest answers a window's p99 is read from: with
// fewer, the 99th percentile is one of the two slowest, whatever they
// were.
const minLatencies = 200

// P99 is the 99th percentile (nearest rank) of d; false with fewer than
// minLatencies.
func P99(d []time.Duration) (time.Duration, bool) {
	if len(d) < minLatencies {
		return 0, false
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)*99+99)/100-1], true
}

// p99Factor and p99Floor bound how much worse the last window's p99 may
// be than the first's: twice, as the issue asks, and 5 ms more at least.
// On two shared cores the facade's p99 is a few milliseconds, and one
// scheduler time slice of a busy neighbour (the API server compacting,
// a replica's relist) moves it by that much without anything having
// degraded.
const (
	p99Factor = 2
	p99Floor  = 5 * time.Millisecond
)

// P99Verdict compares the facade's p99 of the first and last windows.
type P99Verdict struct {
	First, Last time.Duration
	// Measured is false when a window had too few answers: the facade
	// did not answer enough to tell, which fails the run as a worse p99
	// does.
	Measured, Worse bool
}

// CompareP99 judges the last window's latencies against the first's.
func CompareP99(first, last []time.Duration) P99Verdict {
	var v P99Verdict
	var okFirst, okLast bool
	v.First, okFirst = P99(first)
	v.Last, okLast = P99(last)
	v.Measured = okFirst && okLast
	v.Worse = !v.Measured || (v.Last > p99Factor*v.First && v.Last-v.First > p99Floor)
	return v
}
