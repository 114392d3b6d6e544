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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/shared/metapatch"
)

// The status writes of services and the assignment writes are answered
// with metadata alone; what follows them must still see the object as
// written.
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
})
