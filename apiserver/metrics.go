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

package apiserver

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The facade's metrics join the manager's on its /metrics endpoint.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "edgeplane_api_requests_total",
		Help: "Requests to the /api/v1 facade by route, method and HTTP status code.",
	}, []string{"route", "method", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "edgeplane_api_request_duration_seconds",
		Help:    "Time the /api/v1 facade took to answer, by route.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"route"})
)

func init() {
	metrics.Registry.MustRegister(requestsTotal, requestDuration)
}
