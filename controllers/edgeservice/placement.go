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
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/edgenode"
	"github.com/edgeplane/edgeplane/internal/shared/imageref"
	"github.com/edgeplane/edgeplane/internal/shared/names"
)

// placement is the outcome of placing a service's instances.
type placement struct {
	instances []edgev1alpha1.ServiceInstance
	desired   int32
	// problems name the nodes that could not take an instance, and why.
	problems []string
	// recheckIn is when an instance on an offline node is due to move; 0 for never.
	recheckIn time.Duration
}

// nodeOS is the operating-system kind of a node: what its agent reports,
// else what its spec expects.
func nodeOS(n *edgev1alpha1.EdgeNode) string {
	if n.Status.NodeInfo != nil && n.Status.NodeInfo.Type != "" {
		return n.Status.NodeInfo.Type
	}
	return n.Spec.Type
}

// capacityOf is how many instances placement puts on a node: its spec's
// maxInstances, else what its agent reports, else the default.
func capacityOf(n *edgev1alpha1.EdgeNode) int {
	switch {
	case n.Spec.MaxInstances != nil:
		return int(*n.Spec.MaxInstances)
	case n.Status.NodeInfo != nil && n.Status.NodeInfo.MaxInstances > 0:
		return int(n.Status.NodeInfo.MaxInstances)
	}
	return edgev1alpha1.DefaultMaxInstances
}

// timeIn is how long a node has been in state, from its Ready condition's
// last transition (else its creation); 0 when it is in another state.
func timeIn(n *edgev1alpha1.EdgeNode, state edgev1alpha1.NodeState, now time.Time) time.Duration {
	if n.Status.Status != state {
		return 0
	}
	if c := meta.FindStatusCondition(n.Status.Conditions, edgev1alpha1.ConditionReady); c != nil {
		return now.Sub(c.LastTransitionTime.Time)
	}
	return now.Sub(n.CreationTimestamp.Time)
}

// unavailableFor is how long a node has been unable to run instances
// (offline, or online with its runtime unreachable), from its Ready
// condition's last transition; 0 when it is available.
func unavailableFor(n *edgev1alpha1.EdgeNode, now time.Time) time.Duration {
	if edgenode.Available(n) {
		return 0
	}
	if c := meta.FindStatusCondition(n.Status.Conditions, edgev1alpha1.ConditionReady); c != nil {
		return now.Sub(c.LastTransitionTime.Time)
	}
	return now.Sub(n.CreationTimestamp.Time)
}

func (r *Reconciler) newInstance(svc *edgev1alpha1.EdgeService, node string, now time.Time) edgev1alpha1.ServiceInstance {
	taskID := uuid.NewString()
	base := svc.Name
	if c := svc.Spec.Config; c != nil && c.Linux != nil && c.Linux.Name != "" {
		base = c.Linux.Name
	} else if c != nil && c.Embedded != nil && c.Embedded.Name != "" {
		base = c.Embedded.Name
	}
	return edgev1alpha1.ServiceInstance{
		TaskID:       taskID,
		Name:         names.Container(base, taskID),
		NodeName:     node,
		DeployStatus: edgev1alpha1.DeployDeploying,
		// As the API server stores it (microseconds, no monotonic
		// reading): what placement remembers must equal what it reads back,
		// or every reconcile would write the instance again.
		TaskCreatedTime: metav1.NewMicroTime(now.Truncate(time.Microsecond)),
	}
}

// place decides the service's instances: static services get one on each
// listed node that exists and fits; dynamic services get factor instances
// over the online nodes that fit, spread evenly and kept where they are
// while their node stays (or is only briefly) offline. nodes holds at
// least the nodes of the service's instances, and gains the nodes of new
// ones; every reads every node, called only when placement must choose
// among all, at most once. existing are the instances placed before.
func (r *Reconciler) place(svc *edgev1alpha1.EdgeService, existing []edgev1alpha1.ServiceInstance, nodes map[string]*edgev1alpha1.EdgeNode, now time.Time, every func() ([]*edgev1alpha1.EdgeNode, error)) (placement, error) {
	var all []*edgev1alpha1.EdgeNode
	everyNode := func() ([]*edgev1alpha1.EdgeNode, error) {
		if every == nil {
			return all, nil
		}
		var err error
		all, err = every()
		every = nil
		return all, err
	}
	ref, _ := imageref.Parse(string(svc.Spec.Image.Ref)) // the schema validated it
	byNode := map[string][]edgev1alpha1.ServiceInstance{}
	for _, inst := range existing {
		byNode[inst.NodeName] = append(byNode[inst.NodeName], inst)
	}
	var p placement
	// A node's load is what is placed on it, or what its agent reports
	// when more (containers still being removed); added counts what this
	// pass places.
	added := map[string]int{}
	load := func(n *edgev1alpha1.EdgeNode) int {
		return max(r.load.of(n.Name), int(n.Status.ContainerManagedTotal)) + added[n.Name]
	}
	room := func(n *edgev1alpha1.EdgeNode) bool { return load(n) < capacityOf(n) }
	fits := func(n *edgev1alpha1.EdgeNode) string {
		if os := nodeOS(n); os != ref.OS {
			if os == "" {
				return fmt.Sprintf("node %s has not reported its OS type; the image needs %s", n.Name, ref.OS)
			}
			return fmt.Sprintf("node %s runs %s; the image needs %s", n.Name, os, ref.OS)
		}
		return ""
	}

	if svc.Spec.Policy != edgev1alpha1.PolicyDynamic {
		p.desired = int32(len(svc.Spec.Nodes))
		for _, name := range svc.Spec.Nodes {
			n, ok := nodes[name]
			if !ok {
				p.problems = append(p.problems, fmt.Sprintf("node %s does not exist", name))
				continue
			}
			if why := fits(n); why != "" {
				p.problems = append(p.problems, why)
				continue
			}
			if existing := byNode[name]; len(existing) > 0 {
				p.instances = append(p.instances, existing[0])
			} else if !room(n) {
				p.problems = append(p.problems, fmt.Sprintf("node %s is full: %d instances placed, maxInstances %d", name, load(n), capacityOf(n)))
			} else {
				p.instances = append(p.instances, r.newInstance(svc, name, now))
				added[name]++
			}
		}
		return p, nil
	}

	if svc.Spec.Factor != nil {
		p.desired = *svc.Spec.Factor
	}
	selector := labels.Everything()
	if svc.Spec.NodeSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(svc.Spec.NodeSelector)
		if err != nil {
			p.problems = append(p.problems, fmt.Sprintf("nodeSelector is invalid: %v", err))
			return p, nil
		}
		selector = s
	}
	eligible := func(n *edgev1alpha1.EdgeNode) bool {
		return n != nil && fits(n) == "" && selector.Matches(labels.Set(n.Labels))
	}

	// Keep the instances whose node still qualifies, including nodes
	// offline (or with an unreachable runtime) for less than the reschedule
	// grace period, and offline nodes of a zone that looks partitioned,
	// however long.
	count := map[string]int{}
	var keep []edgev1alpha1.ServiceInstance
	var disrupted map[string]string // only once a node is past the grace period
	held := map[string]bool{}
	for _, inst := range existing {
		n := nodes[inst.NodeName]
		if !eligible(n) {
			continue
		}
		switch off := unavailableFor(n, now); {
		case off == 0:
		case off < r.RescheduleGrace:
			if left := r.RescheduleGrace - off; p.recheckIn == 0 || left < p.recheckIn {
				p.recheckIn = left
			}
		default:
			if disrupted == nil {
				all, err := everyNode()
				if err != nil {
					return p, err
				}
				disrupted = disruptedZones(all, now, r.RescheduleGrace)
			}
			// A partition holds offline nodes; an engine that is down on
			// a node that still reaches us is no partition.
			why, partitioned := disrupted[zoneOf(n)]
			if !partitioned || n.Status.Status == edgev1alpha1.NodeOnline {
				continue
			}
			if !held[why] {
				held[why] = true
				p.problems = append(p.problems, why)
			}
		}
		keep = append(keep, inst)
		count[inst.NodeName]++
	}
	sort.Strings(p.problems)
	// Too many: drop from the busiest nodes, offline nodes first, newest first.
	for int32(len(keep)) > p.desired {
		victim := 0
		for i := range keep {
			if worse(keep[i], keep[victim], nodes, count) {
				victim = i
			}
		}
		count[keep[victim].NodeName]--
		keep = append(keep[:victim], keep[victim+1:]...)
	}
	// Too few: add to the available nodes with the fewest instances. Most
	// reconciles place nothing and skip going through every node.
	// A node with no room left takes no new instance.
	var online []*edgev1alpha1.EdgeNode
	avail, capacity := 0, 0
	if int32(len(keep)) < p.desired {
		all, err := everyNode()
		if err != nil {
			return p, err
		}
		for _, n := range all {
			if !eligible(n) || !edgenode.Available(n) {
				continue
			}
			avail, capacity = avail+1, capacity+capacityOf(n)
			if room(n) {
				online = append(online, n)
			}
		}
	}
	// Fewest instances of this service, then the lightest load, then by
	// name: one pass, no sort, the same node whatever the order.
	for int32(len(keep)) < p.desired {
		if len(online) == 0 {
			if avail > 0 {
				p.problems = append(p.problems, fmt.Sprintf("every online node that runs %s and matches nodeSelector is full (%d nodes, maxInstances %d in all); %d of %d instances placed", ref.OS, avail, capacity, len(keep), p.desired))
			} else {
				p.problems = append(p.problems, fmt.Sprintf("no online node with a reachable runtime runs %s and matches nodeSelector; %d of %d instances placed", ref.OS, len(keep), p.desired))
			}
			break
		}
		best, bestLoad := online[0], load(online[0])
		for _, n := range online[1:] {
			if c, bc := count[n.Name], count[best.Name]; c != bc {
				if c < bc {
					best, bestLoad = n, load(n)
				}
				continue
			}
			if l := load(n); l < bestLoad || (l == bestLoad && n.Name < best.Name) {
				best, bestLoad = n, l
			}
		}
		keep = append(keep, r.newInstance(svc, best.Name, now))
		count[best.Name]++
		added[best.Name]++
		nodes[best.Name] = best
		if !room(best) {
			online = slices.DeleteFunc(online, func(n *edgev1alpha1.EdgeNode) bool { return n == best })
		}
	}
	p.instances = keep
	return p, nil
}

// worse says whether instance a should go before instance b when a
// dynamic service has too many instances.
func worse(a, b edgev1alpha1.ServiceInstance, nodes map[string]*edgev1alpha1.EdgeNode, count map[string]int) bool {
	aOff, bOff := !edgenode.Available(nodes[a.NodeName]), !edgenode.Available(nodes[b.NodeName])
	if aOff != bOff {
		return aOff
	}
	if count[a.NodeName] != count[b.NodeName] {
		return count[a.NodeName] > count[b.NodeName]
	}
	return a.TaskCreatedTime.After(b.TaskCreatedTime.Time)
}

// recordNodes lists the nodes of a configuration as a DeployRecord keeps
// them: the listed nodes of a static service, the nodes of the current
// placement of a dynamic one.
func recordNodes(spec edgev1alpha1.EdgeServiceSpec, instances []edgev1alpha1.ServiceInstance, nodes map[string]*edgev1alpha1.EdgeNode) []edgev1alpha1.RecordNode {
	list := spec.Nodes
	if spec.Policy == edgev1alpha1.PolicyDynamic {
		list = nil
		for _, inst := range instances {
			list = append(list, inst.NodeName)
		}
	}
	seen := map[string]bool{}
	var out []edgev1alpha1.RecordNode
	for _, name := range list {
		if seen[name] {
			continue
		}
		seen[name] = true
		rn := edgev1alpha1.RecordNode{NodeName: name}
		if n := nodes[name]; n != nil {
			rn.NodeID, rn.Address = string(n.UID), n.Address()
		}
		out = append(out, rn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeName < out[j].NodeName })
	return out
}
