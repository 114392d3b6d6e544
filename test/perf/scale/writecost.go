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
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/procs"
)

// The write-cost phase: rounds of a rest window and a window of spec
// changes, writeCostRate a second.
const (
	writeCostRounds = 3
	writeCostWindow = 20 * time.Second
	writeCostRate   = 5
)

// writeCost measures what one spec change of a 2-instance service costs
// kube-apiserver with every node's agent watching: its CPU for the whole
// change (the service's write, its record, the two nodes' assignments,
// their agents' reports, the status) beyond its rest rate, and the events
// the agents' watches receive. A change that woke every agent would cost
// more with more nodes; one that wakes the two that run it costs the same
// at any size. The API server's rest rate is taken right before and after
// each window of changes, since at thousands of nodes it is most of what
// the API server does.
// It returns its line and the median of the rounds.
func writeCost(ctx context.Context, c client.Client, view client.Reader, apiserverPID int, delivered func() int64) (string, float64, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "edgeplane-write-cost"}}
	if err := c.Create(ctx, ns); err != nil {
		return "", 0, err
	}
	svc := &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "write-cost"},
		Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1.0#linux"},
			Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To(int32(2))}},
	}
	if err := c.Create(ctx, svc); err != nil {
		return "", 0, err
	}
	settled := func(gen int64) (bool, error) {
		s := &edgev1alpha1.EdgeService{}
		if err := view.Get(ctx, client.ObjectKeyFromObject(svc), s); err != nil {
			return false, err
		}
		return s.Status.ObservedGeneration >= gen && s.Generation >= gen && s.Status.ReadyReplicas == 2 &&
			s.Status.DeployedRevision == s.Status.Revision, nil
	}
	if err := procs.WaitFor(ctx, "the write-cost service running", 500*time.Millisecond, func() (bool, error) { return settled(1) }); err != nil {
		return "", 0, err
	}
	api := map[string]int{"kube-apiserver": apiserverPID}
	cpu := func() time.Duration { return procs.CPUTimes(api)["kube-apiserver"] }
	restRate := func() float64 { // CPU-seconds per second
		before := cpu()
		time.Sleep(writeCostWindow)
		return (cpu() - before).Seconds() / writeCostWindow.Seconds()
	}
	var perWrite, events []float64
	rateBefore := restRate()
	changes := 0
	for range writeCostRounds {
		cpuBefore, eventsBefore, began := cpu(), delivered(), time.Now()
		tick := time.NewTicker(time.Second / writeCostRate)
		n := 0
		for time.Since(began) < writeCostWindow {
			<-tick.C
			changes++
			patch := fmt.Sprintf(`{"spec":{"config":{"linux":{"env":["WRITE_COST=%d"]}}}}`, changes)
			if err := c.Patch(ctx, svc, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
				tick.Stop()
				return "", 0, err
			}
			n++
		}
		tick.Stop()
		if err := procs.WaitFor(ctx, "the write-cost service settled", 200*time.Millisecond, func() (bool, error) { return settled(svc.Generation) }); err != nil {
			return "", 0, err
		}
		took, used, got := time.Since(began), cpu()-cpuBefore, delivered()-eventsBefore
		rateAfter := restRate()
		beyond := used.Seconds() - (rateBefore+rateAfter)/2*took.Seconds()
		perWrite = append(perWrite, beyond*1000/float64(n))
		events = append(events, float64(got)/float64(n))
		rateBefore = rateAfter
	}
	m := median(perWrite)
	return fmt.Sprintf("writecost: changes_per_round=%d rest_cores=%.2f apiserver_ms_per_change=%s median=%.2f agent_events_per_change=%s",
		writeCostRate*int(writeCostWindow/time.Second), rateBefore, joinFloats(perWrite), m, joinFloats(events)), m, nil
}

func joinFloats(v []float64) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = fmt.Sprintf("%.2f", f)
	}
	return strings.Join(s, ",")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
