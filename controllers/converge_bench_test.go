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

package controllers_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// BenchmarkConverge measures, on envtest, how the manager follows an image
// change of every one of 200 dynamic services with 5 instances each over 20
// nodes: the time until every instance runs the new revision, and the API
// writes the manager makes per spec change, by verb and kind. An agent
// loop plays the 20 nodes: it reports every instance placed on its node as
// running the instance's revision, polling every 100 ms.
//
//	make bench  (or: go test ./controllers -run '^$' -bench Converge -benchtime 3x)
func BenchmarkConverge(b *testing.B) {
	const services, factor, nodes = 200, 5, 20
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, cfg, c, err := testenv.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()

	o := controllers.DefaultOptions()
	must(b, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.LeaseNamespace}}))
	must(b, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}))

	writes := &writeCounter{counts: map[string]int{}}
	// The manager as cmd/manager runs it, with its flags' defaults.
	mo := manager.ForTest(o)
	mo.API.BindAddress = "0"
	mo.NewClient = func(config *rest.Config, options client.Options) (client.Client, error) {
		cl, err := client.New(config, options)
		return &countingClient{Client: cl, counter: writes}, err
	}
	m, err := manager.New(ctx, cfg, mo)
	must(b, err)
	go func() { _ = m.Start(ctx) }()

	for i := range nodes {
		name := fmt.Sprintf("bench-%02d", i)
		must(b, c.Create(ctx, &edgev1alpha1.EdgeNode{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       edgev1alpha1.EdgeNodeSpec{Address: "10.2.0.1:7200", Type: "linux", Arch: "amd64"},
		}))
		now := metav1.NowMicro()
		must(b, c.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.LeaseNamespace},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](3600), RenewTime: &now},
		}))
	}
	for i := range services {
		must(b, c.Create(ctx, &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("svc-%03d", i)},
			Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@v0#linux"}, Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To[int32](factor)}},
		}))
	}
	// The agent and the waits read a watch-fed cache of their own, so that
	// polling does not load the API server the manager is measured on.
	view, err := cache.New(cfg, cache.Options{Scheme: testenv.Scheme})
	must(b, err)
	go func() { _ = view.Start(ctx) }()
	if !view.WaitForCacheSync(ctx) {
		b.Fatal("the benchmark's own watch did not sync")
	}
	go runInstantAgent(ctx, view, c, 100*time.Millisecond)
	must(b, waitFor(ctx, view, services, ready(factor)))

	var total time.Duration
	n := 0
	for b.Loop() {
		n++
		writes.reset()
		before, err := testenv.APIRequests(ctx, cfg)
		must(b, err)
		ref := edgev1alpha1.ImageRef(fmt.Sprintf("app@v%d#linux", n))
		start := time.Now()
		must(b, forEachService(ctx, view, func(s *edgev1alpha1.EdgeService) error {
			patch := client.MergeFrom(s.DeepCopy())
			s.Spec.Image.Ref = ref
			return c.Patch(ctx, s, patch)
		}))
		must(b, waitFor(ctx, view, services, recorded))
		rec := time.Since(start)
		must(b, waitFor(ctx, view, services, ready(factor)))
		took := time.Since(start)
		total += took
		after, err := testenv.APIRequests(ctx, cfg)
		must(b, err)
		b.Logf("run %d: requests the API server served per spec change, all clients: %s", n, since(before, after, services))
		b.Logf("run %d: %d services x %d instances: all recorded in %v, all instances ready in %v; manager writes per spec change: %s",
			n, services, factor, rec.Round(time.Millisecond), took.Round(time.Millisecond), writes.perChange(services))
	}
	b.ReportMetric(total.Seconds()/float64(n), "s/converge")
	b.ReportMetric(float64(writes.total())/services, "writes/change")
	b.ReportMetric(0, "ns/op")
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// forEachService applies f to every benchmark service with 8 workers.
func forEachService(ctx context.Context, c client.Reader, f func(*edgev1alpha1.EdgeService) error) error {
	list := &edgev1alpha1.EdgeServiceList{}
	if err := c.List(ctx, list, client.InNamespace("bench")); err != nil {
		return err
	}
	work := make(chan *edgev1alpha1.EdgeService)
	errs := make(chan error, len(list.Items))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for s := range work {
				if err := f(s); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range list.Items {
		work <- &list.Items[i]
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// recorded says whether a service has a record of its current spec.
func recorded(s *edgev1alpha1.EdgeService) bool {
	return s.Status.ObservedGeneration == s.Generation && s.Status.Revision == s.Generation
}

// ready says whether every instance of a service succeeded at its current spec.
func ready(factor int) func(*edgev1alpha1.EdgeService) bool {
	return func(s *edgev1alpha1.EdgeService) bool {
		return recorded(s) && s.Status.ReadyReplicas == int32(factor) && s.Status.Replicas == int32(factor)
	}
}

// waitFor waits until every service satisfies done.
func waitFor(ctx context.Context, c client.Reader, services int, done func(*edgev1alpha1.EdgeService) bool) error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		list := &edgev1alpha1.EdgeServiceList{}
		if err := c.List(ctx, list, client.InNamespace("bench")); err != nil {
			return err
		}
		n := 0
		for i := range list.Items {
			if done(&list.Items[i]) {
				n++
			}
		}
		if n == services {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("services did not converge in 5 minutes")
}

// runInstantAgent plays every node's agent: each tick it reports the
// instances placed on a node as running their revision, writing a node's
// status only when its report changed.
func runInstantAgent(ctx context.Context, view client.Reader, c client.Client, every time.Duration) {
	last := map[string][]edgev1alpha1.ObservedContainer{}
	info := edgev1alpha1.NodeInfo{Type: "linux", Arch: "amd64", ReadsAssignment: true}
	for ctx.Err() == nil {
		list := &edgev1alpha1.NodeAssignmentList{}
		if err := view.List(ctx, list); err == nil {
			byNode := map[string][]edgev1alpha1.ObservedContainer{}
			for _, a := range list.Items {
				for _, e := range a.Spec.Services {
					for _, inst := range e.Instances {
						byNode[a.Name] = append(byNode[a.Name], edgev1alpha1.ObservedContainer{
							Name: inst.Name, ID: "rt-" + inst.TaskID[:8], TaskID: inst.TaskID, Revision: inst.Revision, State: edgev1alpha1.ContainerRunning,
						})
					}
				}
			}
			for node, containers := range byNode {
				sort.Slice(containers, func(i, j int) bool { return containers[i].Name < containers[j].Name })
				if reflect.DeepEqual(last[node], containers) {
					continue
				}
				if testenv.Report(ctx, c, node, info, nil, containers...) == nil {
					last[node] = containers
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
}

// writeCounter counts the manager's API writes by verb and kind.
type writeCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (w *writeCounter) add(verb string, obj any, sub string) {
	kind := fmt.Sprintf("%T", obj)
	kind = kind[strings.LastIndex(kind, ".")+1:]
	if sub != "" {
		kind += "/" + sub
	}
	w.mu.Lock()
	w.counts[verb+" "+kind]++
	w.mu.Unlock()
}

func (w *writeCounter) reset() {
	w.mu.Lock()
	w.counts = map[string]int{}
	w.mu.Unlock()
}

func (w *writeCounter) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := 0
	for _, n := range w.counts {
		t += n
	}
	return t
}

func (w *writeCounter) perChange(changes int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.counts))
	for k := range w.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(w.counts[k])/float64(changes)))
	}
	return strings.Join(parts, ", ")
}

// countingClient counts the writes made through it.
type countingClient struct {
	client.Client
	counter *writeCounter
}

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.counter.add("create", obj, "")
	return c.Client.Create(ctx, obj, opts...)
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.counter.add("update", obj, "")
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.counter.add("patch", obj, "")
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.counter.add("delete", obj, "")
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter {
	return &countingStatus{SubResourceWriter: c.Client.Status(), counter: c.counter}
}

type countingStatus struct {
	client.SubResourceWriter
	counter *writeCounter
}

func (s *countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.counter.add("patch", obj, "status")
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func (s *countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.counter.add("update", obj, "status")
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s *countingStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	s.counter.add("apply", obj, "status")
	return s.SubResourceWriter.Apply(ctx, obj, opts...)
}

func (c *countingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.counter.add("apply", obj, "")
	return c.Client.Apply(ctx, obj, opts...)
}

// since prints the counts added after before, per change, leaving out
// watches and the tiny ones.
func since(before, after map[string]float64, changes int) string {
	keys := make([]string, 0, len(after))
	for k := range after {
		if d := (after[k] - before[k]) / float64(changes); d >= 0.05 && !strings.HasPrefix(k, "WATCH") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, (after[k]-before[k])/float64(changes)))
	}
	return strings.Join(parts, ", ")
}
