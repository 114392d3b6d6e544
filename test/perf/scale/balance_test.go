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

import "testing"

// A balancer process may hold 20,000 files, two per device: the run
// spreads larger fleets over processes, and keeps smaller ones in its
// own unless the balancer must have a priority of its own.
func TestBalancerProcs(t *testing.T) {
	for _, tc := range []struct {
		nodes int
		apart bool
		want  int
	}{
		{nodes: 1000, want: 0},
		{nodes: 8000, want: 0},
		{nodes: 8001, want: 2},
		{nodes: 10000, want: 2},
		{nodes: 20000, want: 3},
		{nodes: 1000, apart: true, want: 1},
		{nodes: 10000, apart: true, want: 2},
	} {
		if got := balancerProcs(tc.nodes, tc.apart); got != tc.want {
			t.Errorf("balancerProcs(%d, %v) = %d, want %d", tc.nodes, tc.apart, got, tc.want)
		}
	}
}
