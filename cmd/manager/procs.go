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

// goMaxProcs is the GOMAXPROCS the manager runs with: at least floor when Go
// chose every CPU of the machine (no GOMAXPROCS variable, no CPU limit)
// and that is fewer. On a machine of few cores, reconcilers and informers
// decoding events can hold every Go processor; a facade request that wakes
// then waits for Go's 10 ms preemption. More processors than cores hand
// that wait to the kernel, which switches sooner. A CPU limit is left
// alone: threads beyond the quota would be throttled instead.
func goMaxProcs(current, numCPU, floor int, envSet bool) int {
	if envSet || current < numCPU || current >= floor {
		return current
	}
	return floor
}
