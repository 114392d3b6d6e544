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

package figures

import (
	"slices"
	"testing"
)

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		line   string
		prefix string
		want   []Figure
	}{
		{"online: nodes=1000 online_s=11.3", "online", []Figure{{"nodes", "1000"}, {"online_s", "11.3"}}},
		{"writecost: apiserver_ms_per_change=27.6,31.5 median=31.5", "writecost", []Figure{{"apiserver_ms_per_change", "27.6,31.5"}, {"median", "31.5"}}},
		{"1000 nodes registered and online 11.3s after", "", nil},
		{"CPU at rest with 1000 nodes online: x=1", "", nil},
		{"not converged: 1686 of 25000 services had every instance successful", "", nil},
		{"scale: nodes=1000 and more", "", nil},
		{"  kube-apiserver                        62.8 s", "", nil},
		{"error: dial tcp: connection refused", "", nil},
	} {
		prefix, got, ok := ParseLine(tc.line)
		if ok != (tc.want != nil) || prefix != tc.prefix || !slices.Equal(got, tc.want) {
			t.Errorf("ParseLine(%q) = %q, %v, %v; want %q, %v", tc.line, prefix, got, ok, tc.prefix, tc.want)
		}
	}
}
