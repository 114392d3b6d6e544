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
	"fmt"
	"math"
	"time"
)

// projectTo is the fleet the run's figures are projected to.
const projectTo = 100_000

// baseline is what the control plane held before the first node joined:
// memory per node is the growth from it, not the whole.
type baseline struct {
	apiserverRSS, hubRSS int64
	etcdBytes            float64
}

// projectionLine projects the run's figures at rest, its joins and its
// registration linearly to target nodes: memory as the baseline plus the
// growth per node measured, CPU at rest and the registration's time in
// proportion to the nodes (an upper bound where a cost is fixed, as the
// writes at rest through the hub are), the joins at the run's rate.
// Through the hub only the replicas' figures are given; NaN otherwise.
func projectionLine(target int, rest restFigures, base baseline, joined joinFigures, online time.Duration) string {
	n, t := float64(rest.nodes), float64(target)
	perNode := func(now, before float64) float64 { return math.Max(now-before, 0) / n }
	gib := func(before, slope float64) float64 { return (before + slope*t) / (1 << 30) }
	api := perNode(float64(rest.apiserverRSS), float64(base.apiserverRSS))
	etcd := perNode(rest.etcdBytes, base.etcdBytes)
	hubKiB, hubGiB, hubCores, joinMin := math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if rest.hubRSS > 0 {
		hub := perNode(float64(rest.hubRSS), float64(base.hubRSS))
		hubKiB, hubGiB, hubCores = hub/1024, gib(float64(base.hubRSS), hub), rest.hubCPUPerNode*t/1000
	}
	if joined.joins > 0 && joined.took > 0 {
		joinMin = t / (float64(joined.joins) / joined.took.Seconds()) / 60
	}
	return fmt.Sprintf("projection: nodes=%d from_nodes=%d apiserver_kib_per_node=%.1f apiserver_rss_gib=%.1f apiserver_cores_at_rest=%.2f etcd_kib_per_node=%.1f etcd_gib=%.2f hub_kib_per_node=%.1f hub_rss_gib=%.1f hub_cores_at_rest=%.2f join_min=%.1f online_min=%.1f",
		target, rest.nodes, api/1024, gib(float64(base.apiserverRSS), api), rest.apiserverCPUPerNode*t/1000, etcd/1024, gib(base.etcdBytes, etcd),
		hubKiB, hubGiB, hubCores, joinMin, online.Seconds()*t/n/60)
}
