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

func TestOnlineLine(t *testing.T) {
	s := time.Second
	before := map[string]time.Duration{"kube-apiserver": 10 * s, "etcd": s, "manager": s, "hub-a": s, "hub-b": s, "edge-agent": 2 * s}
	after := map[string]time.Duration{"kube-apiserver": 70 * s, "etcd": 7 * s, "manager": 9 * s, "hub-a": 15 * s, "hub-b": 15 * s,
		"edge-agent": 34 * s, "balancer-a": 4 * s, "scale client and facade load": 4 * s, "trivial handler": 0}
	got := onlineLine(5000, 72*s, before, after, 2)
	// control plane: 60 + 6 + 8 + 14 + 14 = 102; devices: 32 + 4 (the
	// balancer is the fleet's); harness: 4.
	want := "online: nodes=5000 online_s=72.0 cpu_s=142.0 cores_used=1.97 control_plane_cpu_s=102.0 control_plane_s=51.0 devices_cpu_s=36.0 harness_cpu_s=4.0"
	if got != want {
		t.Errorf("onlineLine =\n%s\nwant\n%s", got, want)
	}
}
