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
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// metrics are the hub's Prometheus metrics, served with the manager's on
// its authenticated metrics endpoint. Labels take only fixed values: no
// node name or client string becomes a label.
type metrics struct {
	connected   prometheus.Gauge
	watches     prometheus.Gauge
	joins       *prometheus.CounterVec
	refusals    *prometheus.CounterVec
	beats       prometheus.Counter
	renewals    prometheus.Counter
	transitions *prometheus.CounterVec
	relayLag    prometheus.Histogram
	forwarded   *prometheus.CounterVec
}

var hubMetrics = func() *metrics {
	m := &metrics{
		connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgeplane_hub_connected_nodes",
			Help: "Nodes whose heartbeats this hub replica receives."}),
		watches: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgeplane_hub_watches",
			Help: "Watches of their assignment that nodes hold open at this hub replica."}),
		joins: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgeplane_hub_joins_total",
			Help: "Join requests by result: Joined, or the reason of the refusal."}, []string{"result"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgeplane_hub_refusals_total",
			Help: "Requests of nodes refused, by reason: Unauthenticated, Revoked, Forbidden, Invalid."}, []string{"reason"}),
		beats: prometheus.NewCounter(prometheus.CounterOpts{Name: "edgeplane_hub_beats_total",
			Help: "Heartbeats (Lease renewals) received; none reaches the API server."}),
		renewals: prometheus.NewCounter(prometheus.CounterOpts{Name: "edgeplane_hub_certificate_renewals_total",
			Help: "Node certificates renewed."}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgeplane_hub_transitions_total",
			Help: "Node Lease writes for a node that started or stopped beating at this replica."}, []string{"to"}),
		relayLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "edgeplane_hub_relay_lag_seconds",
			Help:    "From an assignment change reaching the hub's informer to its event written to the node's watch.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgeplane_hub_forwarded_total",
			Help: "Node requests the hub sent on to the API server, by resource."}, []string{"resource"}),
	}
	ctrlmetrics.Registry.MustRegister(m.connected, m.watches, m.joins, m.refusals, m.beats, m.renewals, m.transitions, m.relayLag, m.forwarded)
	return m
}()
