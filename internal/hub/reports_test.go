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
	"context"
	"sync"
	"testing"
	"time"
)

// blockingWrites records each write and holds it until released.
type blockingWrites struct {
	mu      sync.Mutex
	written []string
	release chan struct{}
	started chan struct{}
}

func (b *blockingWrites) write(_ context.Context, node string, body []byte) (any, error) {
	b.mu.Lock()
	b.written = append(b.written, node+":"+string(body))
	b.mu.Unlock()
	b.started <- struct{}{}
	<-b.release
	return string(body), nil
}

func TestReportsCoalesce(t *testing.T) {
	for _, tc := range []struct {
		name string
		// sent while the first report's write is under way
		then []string
		want []string
		// what the last caller is answered with
		answer string
	}{
		{"a retry joins the write under way", []string{"a", "a"}, []string{"n:a"}, "a"},
		{"a newer report waits for it", []string{"b"}, []string{"n:a", "n:b"}, "b"},
		{"only the newest queued is written", []string{"b", "c", "d"}, []string{"n:a", "n:d"}, "d"},
		{"a late retry of the first is answered by the newer", []string{"b", "a"}, []string{"n:a", "n:b"}, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &blockingWrites{release: make(chan struct{}), started: make(chan struct{}, 8)}
			r := newReports(b.write)
			first := r.submit("n", []byte("a"))
			<-b.started
			var last *flight
			for _, body := range tc.then {
				last = r.submit("n", []byte(body))
			}
			close(b.release)
			<-first.done
			<-last.done
			if got := last.out.(string); got != tc.answer {
				t.Errorf("last caller answered with %q, want %q", got, tc.answer)
			}
			for r.pending() > 0 {
				time.Sleep(time.Millisecond)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if len(b.written) != len(tc.want) {
				t.Fatalf("writes %v, want %v", b.written, tc.want)
			}
			for i := range tc.want {
				if b.written[i] != tc.want[i] {
					t.Fatalf("writes %v, want %v", b.written, tc.want)
				}
			}
		})
	}
}

func TestReportsOfNodesAreApart(t *testing.T) {
	b := &blockingWrites{release: make(chan struct{}), started: make(chan struct{}, 8)}
	r := newReports(b.write)
	one, two := r.submit("n1", []byte("a")), r.submit("n2", []byte("a"))
	<-b.started
	<-b.started
	close(b.release)
	<-one.done
	<-two.done
	if len(b.written) != 2 {
		t.Fatalf("writes %v, want one per node", b.written)
	}
}

// pending is how many nodes have a write in flight or waiting.
func (r *reports) pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.nodes)
}

// TestDecodeReport shows that a report with a field the EdgeNode type lacks
// (a newer agent's) is still decoded, and the field named, while what is
// not an EdgeNode is refused.
func TestDecodeReport(t *testing.T) {
	for _, tc := range []struct {
		name, body       string
		unknown, invalid bool
	}{
		{"known fields", `{"metadata":{"name":"n1"},"status":{"containerTotal":1,"containers":[{"name":"c","state":"running"}]}}`, false, false},
		{"a newer agent's field", `{"metadata":{"name":"n1"},"status":{"containerTotal":1,"gpus":2}}`, true, false},
		{"not JSON", `status: {}`, true, true},
		{"not an object", `[1]`, true, true},
	} {
		report, unknown, err := decodeReport([]byte(tc.body))
		if (err != nil) != tc.invalid || (unknown != nil) != tc.unknown {
			t.Errorf("%s: unknown %v, error %v", tc.name, unknown, err)
			continue
		}
		if !tc.invalid && (report.Name != "n1" || report.Status.ContainerTotal != 1) {
			t.Errorf("%s: decoded %+v", tc.name, report)
		}
	}
}
