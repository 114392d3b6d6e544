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
	"testing"
	"time"
)

func TestProjectionLine(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name   string
		rest   restFigures
		base   baseline
		joined joinFigures
		online time.Duration
		want   string
	}{{
		name: "through the hub",
		// 5,000 nodes: kube-apiserver grew from 300 to 1,000 MiB, the
		// replicas from 100 to 840, etcd from 10 to 80 MiB.
		rest: restFigures{nodes: 5000, apiserverRSS: 1000 * mib, etcdBytes: 80 * mib, hubRSS: 840 * mib, apiserverCPUPerNode: 0.003, hubCPUPerNode: 0.03},
		base: baseline{apiserverRSS: 300 * mib, hubRSS: 100 * mib, etcdBytes: 10 * mib}, joined: joinFigures{joins: 5000, took: 50 * time.Second}, online: 75 * time.Second,
		want: "projection: nodes=100000 from_nodes=5000 apiserver_kib_per_node=143.4 apiserver_rss_gib=14.0 apiserver_cores_at_rest=0.30 etcd_kib_per_node=14.3 etcd_gib=1.38 hub_kib_per_node=151.6 hub_rss_gib=14.6 hub_cores_at_rest=3.00 join_min=16.7 online_min=25.0",
	}, {
		name: "direct mode: no replica, no join",
		rest: restFigures{nodes: 1000, apiserverRSS: 500 * mib, etcdBytes: 20 * mib, apiserverCPUPerNode: 0.14},
		base: baseline{apiserverRSS: 300 * mib, etcdBytes: 10 * mib}, online: 17 * time.Second,
		want: "projection: nodes=100000 from_nodes=1000 apiserver_kib_per_node=204.8 apiserver_rss_gib=19.8 apiserver_cores_at_rest=14.00 etcd_kib_per_node=10.2 etcd_gib=0.99 hub_kib_per_node=NaN hub_rss_gib=NaN hub_cores_at_rest=NaN join_min=NaN online_min=28.3",
	}, {
		name: "memory that shrank counts as no growth",
		rest: restFigures{nodes: 1000, apiserverRSS: 200 * mib, apiserverCPUPerNode: 0.01},
		base: baseline{apiserverRSS: 300 * mib}, online: time.Second,
		want: "projection: nodes=100000 from_nodes=1000 apiserver_kib_per_node=0.0 apiserver_rss_gib=0.3 apiserver_cores_at_rest=1.00 etcd_kib_per_node=0.0 etcd_gib=0.00 hub_kib_per_node=NaN hub_rss_gib=NaN hub_cores_at_rest=NaN join_min=NaN online_min=1.7",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := projectionLine(projectTo, tc.rest, tc.base, tc.joined, tc.online); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
