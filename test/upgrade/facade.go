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

package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeplane/edgeplane/test/soak"
)

// facadeReader reads the facade of the manager replicas in turn, as a
// client behind their Service does, ten requests a second, each with a
// deadline: only replicas in the endpoints (ready, not terminating) are
// sent requests.
type facadeReader struct {
	addrs   [2]string
	serving [2]atomic.Bool
	// changes counts each replica's entries into and out of the
	// endpoints: a request whose replica left them while it was under way
	// (chosen, then delayed on a busy machine until the replica's
	// successor listened on the same port, which a pod's new address
	// rules out) is not counted.
	changes [2]atomic.Int64
	client  *http.Client

	mu       sync.Mutex
	took     []time.Duration
	failures []string
	sent     int
}

func newFacadeReader(addrs [2]string) *facadeReader {
	f := &facadeReader{addrs: addrs, client: &http.Client{Timeout: 10 * time.Second}}
	f.serving[0].Store(true)
	f.serving[1].Store(true)
	return f
}

// serve adds replica i to the endpoints or takes it out: the flag first,
// then the count, so that a request that read the count and then found its
// replica serving finds the count moved if the replica left meanwhile.
func (f *facadeReader) serve(i int, on bool) {
	f.serving[i].Store(on)
	f.changes[i].Add(1)
}

// routes are what legacy clients read most.
var routes = []string{"/api/v1/node?pageSize=100", "/api/v1/service?pageNum=1&pageSize=50"}

func (f *facadeReader) run(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		replica := i % 2
		if !f.serving[replica].Load() {
			replica = 1 - replica
		}
		changes := f.changes[replica].Load()
		if !f.serving[replica].Load() {
			continue // it left the endpoints just now
		}
		start := time.Now()
		err := f.get(ctx, f.addrs[replica], routes[(i/2)%len(routes)])
		if ctx.Err() != nil {
			return // cut short by the run's end, not an answer
		}
		if err != nil && f.changes[replica].Load() != changes {
			continue // its replica left the endpoints meanwhile
		}
		f.mu.Lock()
		f.sent++
		if err != nil {
			f.failures = append(f.failures, fmt.Sprintf("%s replica %d: %v", start.Format(time.TimeOnly), replica, err))
		} else {
			f.took = append(f.took, time.Since(start))
		}
		f.mu.Unlock()
	}
}

// get sends one GET; anything but the envelope with status 200 fails.
func (f *facadeReader) get(ctx context.Context, addr, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	var env struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("%s %s: not the envelope: %w", resp.Status, path, err)
	}
	if resp.StatusCode != http.StatusOK || env.Status != http.StatusOK {
		return fmt.Errorf("%s %s: %s", resp.Status, path, env.Message)
	}
	return nil
}

// figures are the requests sent, those that failed (the first few said)
// and the p99 of the answers.
func (f *facadeReader) figures(logf func(string, ...any)) (sent, failed int, p99 time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, msg := range f.failures {
		if i == 5 {
			logf("... and %d more facade failures", len(f.failures)-i)
			break
		}
		logf("facade failure: %s", msg)
	}
	p99, _ = soak.P99(f.took)
	return f.sent, len(f.failures), p99
}
