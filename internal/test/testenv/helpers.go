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

package testenv

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Parallel runs f for 0..n-1, 16 at a time (what seeding a control plane
// on two cores gains from), and returns the first error.
func Parallel(n int, f func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error { return f(i) })
	}
	return g.Wait()
}

// FreeAddr is a loopback address nobody listens on, for a server a test
// starts, and one this process has not handed out before: the kernel may
// give a port just closed to the next listen on :0 again, so two servers
// started side by side (a pod's metrics and hub ports) could otherwise
// be told the same port, and one of them fail to bind.
func FreeAddr() (string, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := l.Addr().String()
		_ = l.Close()
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr, nil
		}
	}
}

// handedOut are the addresses FreeAddr has given.
var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// Ready says whether the manager whose health probes listen on addr is
// ready (its /readyz answers 200 within 2 s): its informers have synced,
// so from then on it watches, leader or not.
func Ready(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// LeaderElectionFlags are a manager's flags for leader election with a
// lease of lease: renew deadline and retry period in the proportions of
// the defaults (15 s, 10 s, 2 s), so that a shorter lease fails over
// sooner in the same way.
func LeaderElectionFlags(lease time.Duration) []string {
	return []string{"--leader-elect", "--leader-election-namespace", "edgeplane-system",
		"--leader-elect-lease-duration", lease.String(), "--leader-elect-renew-deadline", (lease * 2 / 3).String(),
		"--leader-elect-retry-period", (lease / 6).String()}
}

// Leader is the index of the manager that leads among those whose
// plain-HTTP metrics listen on addrs (leader_election_master_status 1).
func Leader(ctx context.Context, addrs []string) (int, error) {
	var errs []error
	for i, addr := range addrs {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		series, err := Scrape(ctx, http.DefaultClient, "http://"+addr+"/metrics")
		cancel()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for k, v := range series {
			if v == 1 && strings.HasPrefix(k, "leader_election_master_status{") {
				return i, nil
			}
		}
	}
	return 0, errors.Join(append(errs, errors.New("no replica leads"))...)
}
