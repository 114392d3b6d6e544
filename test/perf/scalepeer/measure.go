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
	"sort"
	"strings"
)

// isWrite says whether a key of testenv.APIRequests ("PATCH pods/status")
// is a write, as test/perf/scale counts them.
func isWrite(key string) bool {
	switch verb, _, _ := strings.Cut(key, " "); verb {
	case "POST", "PUT", "PATCH", "APPLY", "DELETE":
		return true
	}
	return false
}

// writes counts the writes between two readings of apiserver_request_total,
// Leases (the nodes' heartbeats) included or not.
func writes(before, after map[string]float64, leases bool) float64 {
	total := 0.0
	for key, n := range after {
		if _, res, _ := strings.Cut(key, " "); isWrite(key) && (leases || res != "leases") {
			total += n - before[key]
		}
	}
	return total
}

// writesByRequest lists the top writes between two readings by verb and
// resource, with their number per unit (instance, node).
func writesByRequest(before, after map[string]float64, per string, n, top int) string {
	var keys []string
	for key, n := range after {
		if isWrite(key) && n > before[key] {
			keys = append(keys, key)
		}
	}
	diff := func(k string) float64 { return after[k] - before[k] }
	sort.Slice(keys, func(i, j int) bool { return diff(keys[i]) > diff(keys[j]) })
	var b strings.Builder
	fmt.Fprintf(&b, "\n  %-40s %8s %10s", "verb resource", "writes", "/"+per)
	for i, k := range keys {
		if i == top {
			fmt.Fprintf(&b, "\n  (%d more)", len(keys)-top)
			break
		}
		fmt.Fprintf(&b, "\n  %-40s %8.0f %10.3f", k, diff(k), diff(k)/float64(n))
	}
	return b.String()
}
