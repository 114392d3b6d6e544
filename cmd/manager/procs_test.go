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

func TestProcs(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		current, numCPU, floor int
		envSet                 bool
		want                   int
	}{
		{"two cores, no limit: raised", 2, 2, 4, false, 4},
		{"one core: raised", 1, 1, 4, false, 4},
		{"enough cores already", 8, 8, 4, false, 8},
		{"at the floor", 4, 4, 4, false, 4},
		{"a CPU limit lowered it: left alone", 1, 8, 4, false, 1},
		{"GOMAXPROCS set by hand: left alone", 2, 2, 4, true, 2},
		{"floor 0 turns it off", 2, 2, 0, false, 2},
	} {
		if got := goMaxProcs(tc.current, tc.numCPU, tc.floor, tc.envSet); got != tc.want {
			t.Errorf("%s: goMaxProcs(%d, %d, %d, %v) = %d, want %d", tc.name, tc.current, tc.numCPU, tc.floor, tc.envSet, got, tc.want)
		}
	}
}
