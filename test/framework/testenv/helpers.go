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
	"net"
	"net/http"
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
// starts.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

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
