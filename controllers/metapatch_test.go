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
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/metapatch"
)

// The hub's reports, the assignment writes and the services' status
// writes are answered with metadata alone; what follows them must still
// see the object as written.
var _ = Describe("A patch answered with the object's metadata", func() {
	DescribeTable("leaves the object as written and holding the server's resourceVersion: the next write is no conflict, a stale one is",
		func(lean bool) {
			mp := metapatch.Through(k8sClient)
			if lean {
				hc, err := rest.HTTPClientFor(cfg)
				Expect(err).NotTo(HaveOccurred())
				mp, err = metapatch.New(k8sClient, cfg, hc)
				Expect(err).NotTo(HaveOccurred())
			}
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{GenerateName: "metapatch-", Namespace: "default"},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}}
			Expect(k8sClient.Create(ctx, svc)).To(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, svc))).To(Succeed()) })

			By("writing the status under the optimistic lock")
			base := client.MergeFromWithOptions(svc.DeepCopy(), client.MergeFromWithOptimisticLock{})
			svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}
			Expect(mp.Patch(ctx, svc, base, metav1.PatchOptions{FieldValidation: metav1.FieldValidationIgnore}, "status")).To(Succeed())
			live := &corev1.Service{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), live)).To(Succeed())
			Expect(live.Status.LoadBalancer.Ingress).To(ConsistOf(HaveField("IP", "192.0.2.1")))
			Expect(svc.ResourceVersion).To(Equal(live.ResourceVersion))
			Expect(svc.UID).To(Equal(live.UID))

			By("writing again from the object the first write left")
			stale := svc.DeepCopy()
			base = client.MergeFromWithOptions(svc.DeepCopy(), client.MergeFromWithOptimisticLock{})
			svc.Labels = map[string]string{"written": "twice"}
			Expect(mp.Patch(ctx, svc, base, metav1.PatchOptions{FieldManager: "metapatch-test"})).To(Succeed())
			Expect(svc.Labels).To(HaveKeyWithValue("written", "twice"))

			By("writing from a copy older than that")
			base = client.MergeFromWithOptions(stale.DeepCopy(), client.MergeFromWithOptimisticLock{})
			stale.Labels = map[string]string{"written": "stale"}
			err := mp.Patch(ctx, stale, base, metav1.PatchOptions{})
			Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), live)).To(Succeed())
			Expect(live.Labels).To(HaveKeyWithValue("written", "twice"))
		},
		Entry("answered with metadata", true),
		Entry("through controller-runtime's client, answered in full", false),
	)

	It("is answered by kube-apiserver with the metadata of a custom resource, not its status", func() {
		var mu sync.Mutex
		var answers [][]byte
		c := rest.CopyConfig(cfg)
		c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return roundTripper(func(r *http.Request) (*http.Response, error) {
				resp, err := rt.RoundTrip(r)
				if err != nil || r.Method != http.MethodPatch {
					return resp, err
				}
				body, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				resp.Body = io.NopCloser(bytes.NewReader(body))
				mu.Lock()
				defer mu.Unlock()
				answers = append(answers, body)
				return resp, err
			})
		}
		hc, err := rest.HTTPClientFor(c)
		Expect(err).NotTo(HaveOccurred())
		mp, err := metapatch.New(k8sClient, c, hc)
		Expect(err).NotTo(HaveOccurred())
		node := createNode("metapatch-node", "linux", nil)
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, node))).To(Succeed()) })

		const marker = "an-os-version-only-the-status-holds"
		report := fmt.Sprintf(`{"apiVersion":"edge.edgeplane.io/v1alpha1","kind":"EdgeNode","metadata":{"name":%q},"status":{"nodeInfo":{"osVersion":%q}}}`, node.Name, marker)
		n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: node.Name}}
		Expect(mp.Patch(ctx, n, client.RawPatch(types.ApplyPatchType, []byte(report)),
			metav1.PatchOptions{FieldManager: "metapatch-test", Force: ptr.To(true)}, "status")).To(Succeed())

		live := &edgev1alpha1.EdgeNode{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(node), live)).To(Succeed())
		Expect(live.Status.NodeInfo).To(HaveField("OSVersion", marker), "the write landed")
		// The suite's manager may write the node after the report: the
		// version the answer gave is the report's, newer than the create's.
		Expect(n.UID).To(Equal(node.UID))
		Expect(n.ResourceVersion).NotTo(Equal(node.ResourceVersion))
		mu.Lock()
		defer mu.Unlock()
		Expect(answers).To(HaveLen(1))
		Expect(string(answers[0])).To(ContainSubstring("PartialObjectMetadata"))
		Expect(string(answers[0])).NotTo(ContainSubstring(marker), "the answer echoes no status")
	})
})

// roundTripper is a function as an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
