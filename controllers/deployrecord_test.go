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
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/edgeservice"
)

func images(recs []edgev1alpha1.DeployRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%d:%s", r.Spec.Revision, r.Spec.Image.Ref)
	}
	return out
}

func setImage(ref string) func(*edgev1alpha1.EdgeService) {
	return func(s *edgev1alpha1.EdgeService) { s.Spec.Image.Ref = edgev1alpha1.ImageRef(ref) }
}

var _ = Describe("DeployRecords", func() {
	It("appends one record per configuration change: A, B, A makes three", func() {
		ns := newNamespace()
		svc := newStatic(ns, "abc", "rec-node")
		svc.Spec.Image.Ref = "app@A#linux"
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		Eventually(func() []string { return images(records(ns, "abc")) }).Should(Equal([]string{"1:app@A#linux"}))

		update(svc, setImage("app@B#linux"))
		Eventually(func() []string { return images(records(ns, "abc")) }).Should(HaveLen(2))
		update(svc, setImage("app@A#linux"))
		Eventually(func() []string { return images(records(ns, "abc")) }).Should(Equal([]string{"1:app@A#linux", "2:app@B#linux", "3:app@A#linux"}))
		Eventually(func() string { return getService(ns, "abc").Status.CurrentRecord }).Should(Equal("abc-3"))

		By("appending none for an unchanged re-apply or a new revisionHistoryLimit")
		update(svc, func(s *edgev1alpha1.EdgeService) {})
		update(svc, func(s *edgev1alpha1.EdgeService) { s.Spec.RevisionHistoryLimit = ptr.To[int32](5) })
		Eventually(func() int64 { s := getService(ns, "abc"); return s.Generation - s.Status.ObservedGeneration }).Should(BeZero())
		Consistently(func() []edgev1alpha1.DeployRecord { return records(ns, "abc") }, "1s").Should(HaveLen(3))
	})

	It("prunes the oldest records beyond revisionHistoryLimit, never the current one", func() {
		ns := newNamespace()
		svc := newStatic(ns, "pruned", "rec-node")
		svc.Spec.RevisionHistoryLimit = ptr.To[int32](2)
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		for i := 2; i <= 5; i++ {
			update(svc, setImage(fmt.Sprintf("app@%d#linux", i)))
			Eventually(func() int64 { return getService(ns, "pruned").Status.Revision }).Should(Equal(int64(i)))
		}
		Eventually(func() []string { return images(records(ns, "pruned")) }).Should(Equal([]string{"4:app@4#linux", "5:app@5#linux"}))

		By("keeping the current record even with a limit of 1")
		update(svc, func(s *edgev1alpha1.EdgeService) { s.Spec.RevisionHistoryLimit = ptr.To[int32](1) })
		Eventually(func() []string { return images(records(ns, "pruned")) }).Should(Equal([]string{"5:app@5#linux"}))
	})

	It("records every one of N quick changes exactly once", func() {
		ns := newNamespace()
		svc := newStatic(ns, "quick", "rec-node")
		svc.Spec.Image.Ref = "app@0#linux"
		svc.Spec.RevisionHistoryLimit = ptr.To[int32](100)
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		const n = 20
		for i := 1; i <= n; i++ {
			update(svc, setImage(fmt.Sprintf("app@%d#linux", i)))
		}
		want := make([]string, 0, n+1)
		for i := 0; i <= n; i++ {
			want = append(want, fmt.Sprintf("%d:app@%d#linux", i+1, i))
		}
		Eventually(func() []string { return images(records(ns, "quick")) }).Should(Equal(want))
		Eventually(func() int64 { return getService(ns, "quick").Status.Revision }).Should(Equal(int64(n + 1)))
	})

	Context("with managers that crash or race", Ordered, func() {
		BeforeAll(func() {
			stopManager()
			DeferCleanup(func() { stopManager = startManager(nil) })
		})

		It("neither duplicates nor loses a record when the manager dies between the record and the status write", func() {
			ns := newNamespace()
			svc := newStatic(ns, "crash", "rec-node")
			svc.Spec.Image.Ref = "app@A#linux"
			Expect(k8sClient.Create(ctx, svc)).To(Succeed())

			By("running a manager whose every EdgeService status write fails, as if it died right after creating the record")
			var refused atomic.Int32
			stop := startManager(func(rt http.RoundTripper) http.RoundTripper {
				return &failingStatus{RoundTripper: rt, refused: &refused}
			})
			Eventually(func() []string { return images(records(ns, "crash")) }).Should(Equal([]string{"1:app@A#linux"}))
			Eventually(refused.Load).Should(BeNumerically(">", 0))
			stop()
			Expect(getService(ns, "crash").Status.Revision).To(BeZero(), "the status write never landed")

			By("restarting a healthy manager")
			stop = startManager(nil)
			Eventually(func() int64 { return getService(ns, "crash").Status.Revision }).Should(Equal(int64(1)))
			Expect(images(records(ns, "crash"))).To(Equal([]string{"1:app@A#linux"}))

			By("changing the spec while the failing manager runs, then restarting")
			stop()
			stop = startManager(func(rt http.RoundTripper) http.RoundTripper {
				return &failingStatus{RoundTripper: rt, refused: &refused}
			})
			update(svc, setImage("app@B#linux"))
			Eventually(func() []string { return images(records(ns, "crash")) }).Should(Equal([]string{"1:app@A#linux", "2:app@B#linux"}))
			stop()
			stop = startManager(nil)
			Eventually(func() int64 { return getService(ns, "crash").Status.Revision }).Should(Equal(int64(2)))
			Consistently(func() []string { return images(records(ns, "crash")) }, "1s").Should(Equal([]string{"1:app@A#linux", "2:app@B#linux"}))
			stop()
		})

		It("appends once when the same reconcile runs twice from a stale view", func() {
			ns := newNamespace()
			svc := newStatic(ns, "stale", "rec-node")
			svc.Spec.Image.Ref = "app@A#linux"
			Expect(k8sClient.Create(ctx, svc)).To(Succeed())

			// The view is frozen as the cache held it before the first
			// reconcile: the service without status, and no records.
			view := &staleView{Client: k8sClient, svc: getService(ns, "stale")}
			r := &edgeservice.Reconciler{
				Client: view, APIReader: k8sClient, Recorder: &events.FakeRecorder{}, Clock: clock.RealClock{},
			}
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(svc)}
			_, err := r.Reconcile(ctx, req)
			Expect(err).NotTo(HaveOccurred())
			Expect(images(records(ns, "stale"))).To(Equal([]string{"1:app@A#linux"}))
			Expect(getService(ns, "stale").Status.CurrentRecord).To(Equal("stale-1"))

			By("reconciling again from the same view, which knows neither the record nor the status")
			// Whether its status write lands or meets a conflict depends on
			// what else it wrote first; either way nothing is appended.
			_, _ = r.Reconcile(ctx, req)
			Expect(images(records(ns, "stale"))).To(Equal([]string{"1:app@A#linux"}))
			Expect(getService(ns, "stale").Status.Revision).To(Equal(int64(1)))

			By("changing the spec while the view still holds no status and no records")
			update(svc, setImage("app@B#linux"))
			view.svc = getService(ns, "stale")
			view.svc.Status = edgev1alpha1.EdgeServiceStatus{}
			for range 2 {
				_, _ = r.Reconcile(ctx, req)
			}
			Expect(images(records(ns, "stale"))).To(Equal([]string{"1:app@A#linux", "2:app@B#linux"}))
			Expect(getService(ns, "stale").Status.CurrentRecord).To(Equal("stale-2"))
		})

		It("records nothing from a view of the service older than its records", func() {
			ns := newNamespace()
			svc := newStatic(ns, "behind", "rec-node")
			svc.Spec.Image.Ref = "app@A#linux"
			Expect(k8sClient.Create(ctx, svc)).To(Succeed())
			stop := startManager(nil) // the first manager, up to date
			defer stop()
			Eventually(func() int64 { return getService(ns, "behind").Status.Revision }).Should(Equal(int64(1)))
			update(svc, setImage("app@B#linux"))
			// What a second manager's cache still holds: generation 2,
			// and none of the records.
			view := &staleView{Client: k8sClient, svc: getService(ns, "behind")}
			update(svc, setImage("app@C#linux"))
			Eventually(func(g Gomega) {
				s := getService(ns, "behind")
				g.Expect(s.Status.ObservedGeneration).To(Equal(s.Generation))
				g.Expect(images(records(ns, "behind"))).To(HaveLen(int(s.Status.Revision)))
				g.Expect(images(records(ns, "behind"))[s.Status.Revision-1]).To(HaveSuffix(":app@C#linux"))
			}).Should(Succeed())
			before := images(records(ns, "behind"))

			r := &edgeservice.Reconciler{
				Client: view, APIReader: k8sClient, Recorder: &events.FakeRecorder{}, Clock: clock.RealClock{},
			}
			res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(svc)})
			Expect(images(records(ns, "behind"))).To(Equal(before), "generation 2 is not appended after generation 3")
			Expect(err).NotTo(HaveOccurred())
			Expect(res.RequeueAfter).To(BeNumerically(">", 0), "it runs again once the cache has caught up")
		})

		It("appends each change once when two managers race", func() {
			ns := newNamespace()
			svc := newStatic(ns, "race", "rec-node")
			svc.Spec.Image.Ref = "app@0#linux"
			svc.Spec.RevisionHistoryLimit = ptr.To[int32](100)
			Expect(k8sClient.Create(ctx, svc)).To(Succeed())
			stopA, stopB := startManager(nil), startManager(nil)
			defer stopA()
			defer stopB()
			Eventually(func() int64 { return getService(ns, "race").Status.Revision }).Should(Equal(int64(1)))
			const n = 10
			for i := 1; i <= n; i++ {
				update(svc, setImage(fmt.Sprintf("app@%d#linux", i)))
			}
			Eventually(func() int64 { return getService(ns, "race").Status.Revision }).Should(Equal(int64(n + 1)))
			recs := records(ns, "race")
			Expect(images(recs)).To(HaveLen(n+1), "records: %v", images(recs))
			for i, r := range recs {
				Expect(r.Spec.Revision).To(Equal(int64(i + 1)))
				Expect(r.Spec.Image.Ref).To(Equal(edgev1alpha1.ImageRef(fmt.Sprintf("app@%d#linux", i))))
			}
		})
	})
})

var _ = Describe("Finalizers", func() {
	It("holds a service from its creation, and the manager puts it back when someone takes it off", func() {
		ns := newNamespace()
		svc := newStatic(ns, "held", "held-node")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		Expect(svc.Finalizers).To(ContainElement(edgev1alpha1.FinalizerContainers),
			"config/admission's policy puts it on in the create itself: the manager has no patch to make")

		By("someone taking it off, as where the policy is not installed")
		Eventually(func() int64 { return getService(ns, "held").Status.ObservedGeneration }).Should(BeNumerically(">", 0))
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			live := getService(ns, "held")
			patch := client.MergeFromWithOptions(live.DeepCopy(), client.MergeFromWithOptimisticLock{})
			live.Finalizers = nil
			return k8sClient.Patch(ctx, live, patch)
		})).To(Succeed())
		Eventually(func() []string { return getService(ns, "held").Finalizers }).Should(ContainElement(edgev1alpha1.FinalizerContainers),
			"the manager adds it before any node is told of the service")
	})

	It("never drops a finalizer another controller added, even reconciling from a stale copy", func() {
		ns := newNamespace()
		svc := newStatic(ns, "fin", "fin-node")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		// The copy a cache held before anyone added a finalizer.
		stale := getService(ns, "fin")
		stale.Finalizers = nil

		By("another controller adding its finalizer meanwhile")
		const foreign = "example.com/keep"
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			live := getService(ns, "fin")
			patch := client.MergeFromWithOptions(live.DeepCopy(), client.MergeFromWithOptimisticLock{})
			live.Finalizers = append(live.Finalizers, foreign)
			return k8sClient.Patch(ctx, live, patch)
		})).To(Succeed())
		DeferCleanup(func() {
			s := getService(ns, "fin")
			p := client.MergeFrom(s.DeepCopy())
			s.Finalizers = slices.DeleteFunc(s.Finalizers, func(f string) bool { return f == foreign })
			Expect(client.IgnoreNotFound(k8sClient.Patch(ctx, s, p))).To(Succeed())
		})

		r := &edgeservice.Reconciler{
			Client: &staleView{Client: k8sClient, svc: stale}, APIReader: k8sClient, Recorder: &events.FakeRecorder{}, Clock: clock.RealClock{},
		}
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(svc)})
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "a stale copy meets a conflict, not a blind overwrite: %v", err)
		Expect(getService(ns, "fin").Finalizers).To(ContainElement(foreign))
		Eventually(func() []string { return getService(ns, "fin").Finalizers }).Should(ContainElement(edgev1alpha1.FinalizerContainers),
			"the running manager adds its own from a fresh copy")
		Expect(getService(ns, "fin").Finalizers).To(ContainElement(foreign))
	})
})

// staleView is a client whose reads of the service and its records come
// from a frozen snapshot, standing in for a cache that lags behind the
// reconciler's own writes. Writes go to the API server.
type staleView struct {
	client.Client
	svc *edgev1alpha1.EdgeService
}

func (v *staleView) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if s, ok := obj.(*edgev1alpha1.EdgeService); ok {
		v.svc.DeepCopyInto(s)
		return nil
	}
	return v.Client.Get(ctx, key, obj, opts...)
}

func (v *staleView) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*edgev1alpha1.NodeAssignmentList); ok {
		return nil // no assignment was written yet either
	}
	if _, ok := list.(*edgev1alpha1.DeployRecordList); ok {
		return nil // no records yet, as far as this view knows
	}
	return v.Client.List(ctx, list, opts...)
}

// failingStatus is a transport whose EdgeService status writes fail,
// standing in for a manager that dies between creating a record and
// writing status.
type failingStatus struct {
	http.RoundTripper
	refused *atomic.Int32
}

func (f *failingStatus) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, ok := statusPatchOf(r); ok {
		f.refused.Add(1)
		return nil, errors.New("simulated crash before the status write")
	}
	return f.RoundTripper.RoundTrip(r)
}

// recordNodesOf makes n record nodes whose strings are as long as the
// schema allows.
func recordNodesOf(n int) []edgev1alpha1.RecordNode {
	out := make([]edgev1alpha1.RecordNode, n)
	for i := range out {
		name := fmt.Sprintf("%05d-%s", i, strings.Repeat("n", 247))
		out[i] = edgev1alpha1.RecordNode{NodeID: fmt.Sprintf("%036d", i), NodeName: name, Address: strings.Repeat("a", 255) + ":65535"}
	}
	return out
}

var _ = Describe("A record of a service on many nodes", func() {
	It("fits in etcd with the largest configuration, its nodes cut to what fits", func() {
		ns := newNamespace()
		var env []string
		for i := range 256 {
			env = append(env, fmt.Sprintf("V%03d=%s", i, strings.Repeat("x", 4000)))
		}
		record := func(name string, nodes []edgev1alpha1.RecordNode, omitted int32) *edgev1alpha1.DeployRecord {
			spec := newStatic(ns, "wide").Spec.DeploySpec
			spec.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: env}}
			return &edgev1alpha1.DeployRecord{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: edgev1alpha1.DeployRecordSpec{ServiceName: "wide", Revision: 1, DeploySpec: spec, Nodes: nodes, NodesOmitted: omitted}}
		}
		all := recordNodesOf(5000)
		By("every node listed, the record is more than etcd stores")
		Expect(k8sClient.Create(ctx, record("all", all[:1100], 0))).To(MatchError(Or(ContainSubstring("too large"), ContainSubstring("larger than max"))))
		By("cut to what fits, it is stored, and says how many it left out")
		kept, omitted := edgeservice.CapRecordNodes(all)
		Expect(k8sClient.Create(ctx, record("cut", kept, omitted))).To(Succeed())
		got := &edgev1alpha1.DeployRecord{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "cut"}, got)).To(Succeed())
		Expect(got.Spec.Nodes).To(HaveLen(len(kept)))
		Expect(len(got.Spec.Nodes) + int(got.Spec.NodesOmitted)).To(Equal(5000))
	})
})
