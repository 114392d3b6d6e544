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

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// traceSeconds is how long the manager's execution trace lasts.
const traceSeconds = 8

// facadeSplit is where the facade's requests spent their time inside the
// manager, from its execution trace: from the Go runtime seeing a request
// (its connection's goroutine made runnable by the network poller) to the
// goroutine running (waiting for a Go processor), and to the answer's
// write.
type facadeSplit struct {
	queued, answered []time.Duration
	// gcMark is the time the trace spent in GC marking, of span.
	gcMark, span time.Duration
}

// splitFacade reads an execution trace of the manager. It knows net/http's
// server by its stacks: a connection's goroutine waits for the next request
// in conn.serve's bufio Peek, and its first write to the connection after
// that sends the answer (a large one from the handler, a small one when
// the request finishes). A request that arrives before its connection's
// goroutine waits is not seen: the scale run's clients pause between
// requests.
func splitFacade(path string) (facadeSplit, error) {
	var out facadeSplit
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer func() { _ = f.Close() }()
	r, err := trace.NewReader(f)
	if err != nil {
		return out, err
	}
	waiting := map[trace.GoID]bool{}     // waiting for a request
	seen := map[trace.GoID]trace.Time{}  // the runtime saw the request
	running := map[trace.GoID]bool{}     // has run since
	var first, last, markFrom trace.Time // of the trace; of a GC mark
	for {
		e, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, err
		}
		if first == 0 {
			first = e.Time()
		}
		last = e.Time()
		switch e.Kind() {
		case trace.EventRangeBegin:
			if e.Range().Name == "GC concurrent mark phase" {
				markFrom = e.Time()
			}
		case trace.EventRangeEnd:
			if e.Range().Name == "GC concurrent mark phase" && markFrom != 0 {
				out.gcMark += time.Duration(e.Time() - markFrom)
			}
		case trace.EventStateTransition:
			st := e.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			from, to := st.Goroutine()
			switch {
			case from == trace.GoRunning && to == trace.GoWaiting:
				s := st.Stack.String()
				waiting[g] = strings.Contains(s, "net/http.(*conn).serve") && strings.Contains(s, "bufio.(*Reader).Peek")
			case from == trace.GoWaiting && to == trace.GoRunnable && waiting[g]:
				seen[g], running[g] = e.Time(), false
				delete(waiting, g)
			case from == trace.GoRunnable && to == trace.GoRunning:
				if t, ok := seen[g]; ok && !running[g] {
					out.queued = append(out.queued, time.Duration(e.Time()-t))
					running[g] = true
				}
			case from == trace.GoRunning && to == trace.GoSyscall:
				if t, ok := seen[g]; ok && strings.Contains(st.Stack.String(), "net.(*conn).Write") {
					out.answered = append(out.answered, time.Duration(e.Time()-t))
					delete(seen, g)
				}
			}
		}
	}
	out.span = time.Duration(last - first)
	return out, nil
}

func (s facadeSplit) String() string {
	pct := func(d []time.Duration, p int) time.Duration {
		if len(d) == 0 {
			return 0
		}
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)*p/100].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("facade requests inside the manager over %v of trace (%d answers): seen to answered p50 %v p99 %v; of it waiting for a Go processor p50 %v p99 %v; GC marking %.0f %% of the time",
		s.span.Round(time.Second), len(s.answered), pct(s.answered, 50), pct(s.answered, 99), pct(s.queued, 50), pct(s.queued, 99), 100*s.gcMark.Seconds()/max(s.span.Seconds(), 1e-9))
}
