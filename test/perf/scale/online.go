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
	"strings"
	"time"
)

// onlineLine is the figures of bringing every node online, as a line of
// key=value: the time, and the CPU every process used meanwhile, split
// into the control plane's (kube-apiserver, etcd, the manager, the hub
// replicas), the simulated devices' with the balancer's processes (a
// fleet's own CPUs and a Service's balancer), and the harness's. On two
// cores, control_plane_s is what the control plane's work alone would
// take were it given both.
func onlineLine(nodes int, online time.Duration, before, after map[string]time.Duration, cores int) string {
	var all, control, devices, harness float64
	for name, t := range after {
		used := (t - before[name]).Seconds()
		all += used
		switch {
		case name == "kube-apiserver" || name == "etcd" || name == "manager" || strings.HasPrefix(name, "hub-"):
			control += used
		case name == "edge-agent" || strings.HasPrefix(name, "balancer-"):
			devices += used
		default:
			harness += used
		}
	}
	return fmt.Sprintf("online: nodes=%d online_s=%.1f cpu_s=%.1f cores_used=%.2f control_plane_cpu_s=%.1f control_plane_s=%.1f devices_cpu_s=%.1f harness_cpu_s=%.1f",
		nodes, online.Seconds(), all, all/online.Seconds(), control, control/float64(cores), devices, harness)
}
