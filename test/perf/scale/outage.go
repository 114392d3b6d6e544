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
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
)

// reconnect stops the API server (SIGSTOP) for d, as a WAN outage looks to
// every agent at once, and compares the writes per second in the minute
// after it resumes with the steady rate of the minute before: agents that
// come back together must not storm it. It also times how long until
// every node is online again, and splits the minute after by writer.
func reconnect(ctx context.Context, cfg *rest.Config, view cache.Cache, nodes, pid int, d time.Duration, auditLog string) (string, error) {
	const window = time.Minute
	w0, err := serverWrites(ctx, cfg)
	if err != nil {
		return "", err
	}
	time.Sleep(window)
	w1, err := serverWrites(ctx, cfg)
	if err != nil {
		return "", err
	}
	steady := (w1 - w0) / window.Seconds()
	fmt.Printf("steady state: %.1f writes/s over %s; stopping the API server for %s\n", steady, window, d)
	if err := procs.Pause(ctx, pid); err != nil {
		return "", err
	}
	time.Sleep(d)
	if err := procs.Resume(pid); err != nil {
		return "", err
	}
	resumed := time.Now()
	prev := w1
	var peak float64
	var online time.Duration
	perSecond := make([]string, 0, 60)
	for t := time.Second; t <= window; t += time.Second {
		time.Sleep(time.Until(resumed.Add(t)))
		cur, err := serverWrites(ctx, cfg)
		if err != nil {
			continue // the API server may still be catching up
		}
		if t > time.Second || prev != w1 {
			peak = max(peak, cur-prev)
		}
		perSecond = append(perSecond, fmt.Sprintf("%.0f", cur-prev))
		prev = cur
		if online == 0 && allOnline(ctx, view, nodes) {
			online = t
		}
	}
	after := (prev - w1) / window.Seconds()
	fmt.Printf("writes in each second after the API server resumed: %s\n", strings.Join(perSecond, " "))
	time.Sleep(3 * time.Second) // the audit log's last batch
	counts, err := auditWrites(auditLog, resumed, resumed.Add(window))
	if err != nil {
		return "", err
	}
	keys := make([]writeKey, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	fmt.Printf("writes in the minute after, by resource, verb and field manager (audit log):\n")
	for _, k := range keys {
		fmt.Printf("  %-28s %-8s %-24s %8d %8.2f per node\n", k.resource, k.verb, k.manager, counts[k], float64(counts[k])/float64(nodes))
	}
	onlineS := "never"
	if online > 0 {
		onlineS = fmt.Sprintf("%.0f", online.Seconds())
	}
	return fmt.Sprintf("outage: nodes=%d stopped_s=%.0f steady_writes_per_s=%.1f after_writes_per_s=%.1f peak_writes_per_s=%.0f all_online_after_s=%s",
		nodes, d.Seconds(), steady, after, peak, onlineS), nil
}

func allOnline(ctx context.Context, view cache.Cache, nodes int) bool {
	list := &edgev1alpha1.EdgeNodeList{}
	if err := view.List(ctx, list); err != nil {
		return false
	}
	online := 0
	for _, n := range list.Items {
		if n.Status.Status == edgev1alpha1.NodeOnline {
			online++
		}
	}
	return online == nodes
}
