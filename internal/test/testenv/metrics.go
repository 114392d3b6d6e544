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
	"bufio"
	"context"
	"net/http"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// APIRequests reads the API server's apiserver_request_total counters from
// its /metrics, summed by verb and resource, as "PATCH edgeservices/status".
func APIRequests(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	series, err := Scrape(ctx, hc, strings.TrimSuffix(cfg.Host, "/")+"/metrics")
	out := map[string]float64{}
	for line, v := range series {
		labels, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		var verb, resource, sub string
		for _, kv := range strings.Split(strings.TrimSuffix(labels, "}"), ",") {
			k, val, _ := strings.Cut(kv, "=")
			val = strings.Trim(val, `"`)
			switch k {
			case "verb":
				verb = val
			case "resource":
				resource = val
			case "subresource":
				sub = val
			}
		}
		if sub != "" {
			resource += "/" + sub
		}
		out[verb+" "+resource] += v
	}
	return out, err
}

// Scrape reads a Prometheus text endpoint into series (name and labels, as
// written) -> value.
func Scrape(ctx context.Context, hc *http.Client, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// Counter sums a counter of this process's controller-runtime metrics
// registry (a manager a suite runs in process registers there): 0 when
// there is none yet.
func Counter(name string) (float64, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range families {
		if f.GetName() == name {
			sum := 0.0
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
			return sum, nil
		}
	}
	return 0, nil
}
