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
	"context"
	"net/url"
	"sync"
	"time"
)

// readers load the facade at ReadRate until ctx ends, in turn on the
// read replica's and both managers' facades (as a Service spreads them),
// over the routes a client reads most, each request's latency logged.
func (r *run) readers(ctx context.Context, lat *Latencies, serviceID, nodeID string) {
	routes := []string{
		"/api/v1/node?pageSize=10",
		"/api/v1/node?pageSize=100",
		"/api/v1/container/service?serviceIds[]=" + serviceID + "&pageNum=1&pageSize=10",
		"/api/v1/service/record?id=" + serviceID + "&pageNum=1&pageSize=10",
		"/api/v1/container/node?nodeIds[]=" + nodeID + "&pageNum=1&pageSize=10",
		"/api/v1/service?pageNum=1&pageSize=50",
	}
	bases := []string{r.replicaURL, "http://" + r.managers.Facade[0], "http://" + r.managers.Facade[1]}
	// Four readers take the ticks: a slow answer delays the next request
	// of its reader only, and the rate drops only when all four wait.
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range work {
				at, took, ok := r.timed(ctx, bases[i%len(bases)], routes[(i/len(bases))%len(routes)])
				if ctx.Err() == nil { // not one the run's end cut short
					lat.Add(at, took, ok)
				}
			}
		})
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / r.cfg.ReadRate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			close(work)
			wg.Wait()
			return
		case <-tick.C:
		}
		select {
		case work <- i:
		case <-ctx.Done():
		}
	}
}

// timed sends one GET and says when it was sent (from the churn's
// start), how long its answer took and whether it was the envelope with
// status 200.
func (r *run) timed(ctx context.Context, base, path string) (at, took time.Duration, ok bool) {
	start := time.Now()
	_, err := r.facade(ctx, base, "GET", path, nil, nil)
	return start.Sub(r.began), time.Since(start), err == nil
}

// idsPerRequest is the console's node ids per container request
// (apiserver/console/views.js).
const idsPerRequest = 200

// console polls the read replica's facade as the web console does with
// three tabs open, each refreshed ConsoleEvery after its last load
// (apiserver/console/app.js): the overview, the services list and one
// service's page.
func (r *run) console(ctx context.Context, lat *Latencies, serviceID, serviceName string) {
	get := func(path string, out any) bool {
		start := time.Now()
		_, err := r.facade(ctx, r.replicaURL, "GET", path, nil, out)
		if ctx.Err() == nil {
			lat.Add(start.Sub(r.began), time.Since(start), err == nil)
		}
		return err == nil
	}
	// The overview: every node, then per 200 of them the instances
	// counted, those deploying and those failed, at once.
	overview := func() {
		var nodes struct {
			List []struct {
				ID string `json:"id"`
			} `json:"list"`
		}
		if !get("/api/v1/node?pageSize=-1", &nodes) {
			return
		}
		var wg sync.WaitGroup
		for i := 0; i < len(nodes.List); i += idsPerRequest {
			q := url.Values{}
			for _, n := range nodes.List[i:min(i+idsPerRequest, len(nodes.List))] {
				q.Add("nodeIds[]", n.ID)
			}
			ids := q.Encode()
			for _, rest := range []string{"&pageNum=1&pageSize=1", "&pageNum=1&pageSize=-1&key=deploying", "&pageNum=1&pageSize=-1&key=failure"} {
				wg.Go(func() { get("/api/v1/container/node?"+ids+rest, nil) })
			}
		}
		wg.Wait()
	}
	services := func() { get("/api/v1/service?pageNum=1&pageSize=50", nil) }
	service := func() {
		var wg sync.WaitGroup
		for _, p := range []string{"/api/v1/container/service?serviceIds[]=" + serviceID + "&pageNum=1&pageSize=50",
			"/api/v1/service/record?id=" + serviceID + "&pageNum=1&pageSize=100",
			"/api/v1/service?name=" + serviceName + "&pageSize=1000"} {
			wg.Go(func() { get(p, nil) })
		}
		wg.Wait()
	}
	var wg sync.WaitGroup
	for _, tab := range []func(){overview, services, service} {
		wg.Go(func() {
			for ctx.Err() == nil {
				tab()
				select {
				case <-ctx.Done():
				case <-time.After(r.cfg.ConsoleEvery):
				}
			}
		})
	}
	wg.Wait()
}
