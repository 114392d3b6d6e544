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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// BenchmarkReconcileWide measures what a reconcile of a service on n
// nodes computes in memory once every instance runs: the follow-up
// reconcile a wide rollout repeats while its reports come in. The reads
// from the cache and the writes are left out; they are the API server's
// cost, measured by make scale.
func BenchmarkReconcileWide(b *testing.B) {
	for _, n := range []int{250, 1000, 5000} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			w := newWideService(n)
			r := &Reconciler{RescheduleGrace: time.Minute, load: newNodeLoad()}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if writes := w.reconcile(b, r); len(writes) != 0 {
					b.Fatalf("%d writes for a service that needs none", len(writes))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/instance")
		})
	}
}

// wideService is a dynamic service with one running instance on each of
// its nodes, as the cache holds it.
type wideService struct {
	svc     *edgev1alpha1.EdgeService
	current *edgev1alpha1.DeployRecord
	store   map[string]*edgev1alpha1.EdgeNode
	entries map[string]edgev1alpha1.AssignedService
	now     time.Time
}

func newWideService(n int) *wideService {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	w := &wideService{store: map[string]*edgev1alpha1.EdgeNode{}, entries: map[string]edgev1alpha1.AssignedService{}, now: now}
	w.svc = &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gateway", UID: "uid-gateway", Generation: 1}}
	w.svc.Spec.Policy, w.svc.Spec.Factor = edgev1alpha1.PolicyDynamic, ptr.To(int32(n))
	w.svc.Spec.Image.Ref = "registry.example/gateway@1.4.2#linux"
	w.svc.Spec.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Name: "gateway", Env: []string{"MODE=edge", "LOG=info", "REGION=eu-west"}}}
	w.current = &edgev1alpha1.DeployRecord{ObjectMeta: metav1.ObjectMeta{Name: "gateway-1"}}
	// Each a copy of its own, as decoded from the API server: no pointer
	// shared with the service's spec lets a comparison stop early.
	w.current.Spec.Revision, w.current.Spec.DeploySpec = 1, *w.svc.Spec.DeploySpec.DeepCopy()
	started := metav1.NewTime(now.Add(-time.Minute))
	for i := range n {
		name := fmt.Sprintf("edge-%05d", i)
		node := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "name"}}
		node.Spec.Type = "linux"
		node.Status.Status = edgev1alpha1.NodeOnline
		node.Status.NodeInfo = &edgev1alpha1.NodeInfo{Type: "linux", MaxInstances: 64, ReadsAssignment: true}
		node.Status.ContainerManagedTotal = 1
		task := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		inst := edgev1alpha1.AssignedInstance{TaskID: task, Name: "gateway-" + task[:8], Revision: 1, DeployNum: 1,
			TaskCreatedTime: metav1.NewMicroTime(now.Add(-time.Hour))}
		node.Status.Containers = []edgev1alpha1.ObservedContainer{{TaskID: task, Name: inst.Name, Revision: 1,
			State: edgev1alpha1.ContainerRunning, StartedTime: &started, CreatedTime: &started}}
		w.store[name] = node
		w.entries[name] = edgev1alpha1.AssignedService{UID: string(w.svc.UID), Revision: 1, Spec: *w.svc.Spec.DeploySpec.DeepCopy(),
			Instances: []edgev1alpha1.AssignedInstance{inst}}
	}
	return w
}

// reconcile runs the in-memory steps of Reconciler.Reconcile
// in its order and returns the assignment writes it would queue; it
// keeps the status it computes, as the patch would.
func (w *wideService) reconcile(b *testing.B, r *Reconciler) map[string]*edgev1alpha1.AssignedService {
	existing := existingInstances(w.svc, w.entries)
	nodes := make(map[string]*edgev1alpha1.EdgeNode, len(existing))
	for _, inst := range existing {
		nodes[inst.NodeName] = w.store[inst.NodeName]
	}
	p, err := r.place(w.svc, existing, nodes, w.now, func() ([]*edgev1alpha1.EdgeNode, error) {
		b.Fatal("a placed service read every node")
		return nil, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	ro := rolloutOf(w.svc, p.instances, w.entries, nodes, w.current, nil, w.now)
	want, all := desiredStatus(w.svc, p, nodes, w.current, ro, w.now)
	assigned := assignedEntries(w.svc, all, ro.revisions)
	writes := assignmentWrites(w.entries, w.entries, assigned)
	r.load.set(w.svc.UID, all)
	if !equality.Semantic.DeepEqual(want, &w.svc.Status) {
		w.svc.Status = *want
	}
	return writes
}
