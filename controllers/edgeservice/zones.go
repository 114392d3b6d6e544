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

package edgeservice

import (
	"fmt"
	"time"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// ZoneLabel groups nodes into zones for the partition rule; nodes without
// it form one zone.
const ZoneLabel = "topology.kubernetes.io/zone"

// A zone is disrupted when at least disruptedMinOffline of its nodes, and
// at least disruptedShare of them, are offline. Many nodes of one zone
// going silent together is more likely a partition between the zone and
// the control plane (a site's uplink) than failed nodes; moving their
// instances would pile every service onto the rest, and back again once
// the link heals. The anchor is the node lifecycle controller's unhealthy
// zone rule (more than 2 not ready and a share of 0.55); edge sites
// partition in halves more often than datacenter zones, so half counts.
const (
	disruptedMinOffline = 3
	disruptedShare      = 0.5
)

// zoneOf is the zone of a node.
func zoneOf(n *edgev1alpha1.EdgeNode) string { return n.Labels[ZoneLabel] }

// disruptedZones returns, for each disrupted zone, why it is: instances
// are not moved off its offline nodes while it stays so. A node back online
// for less than settle still counts as offline, so that a partition healing
// node by node does not release the nodes still coming back.
func disruptedZones(nodes []*edgev1alpha1.EdgeNode, now time.Time, settle time.Duration) map[string]string {
	total, offline := map[string]int{}, map[string]int{}
	for _, n := range nodes {
		z := zoneOf(n)
		total[z]++
		if n.Status.Status == edgev1alpha1.NodeOffline || timeIn(n, edgev1alpha1.NodeOnline, now) < settle {
			offline[z]++
		}
	}
	out := map[string]string{}
	for z, off := range offline {
		if off >= disruptedMinOffline && float64(off) >= disruptedShare*float64(total[z]) {
			name := fmt.Sprintf("zone %s", z)
			if z == "" {
				name = "the nodes without a zone label"
			}
			out[z] = fmt.Sprintf("%d of %d nodes are offline in %s, which looks like a partition: instances stay on their nodes until it heals", off, total[z], name)
		}
	}
	return out
}
