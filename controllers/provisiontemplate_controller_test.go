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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/names"
)

func entry(ns string, typ edgev1alpha1.TemplateType, parent, name string) *edgev1alpha1.ProvisionTemplate {
	pt := &edgev1alpha1.ProvisionTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.Template(parent, name)},
		Spec:       edgev1alpha1.ProvisionTemplateSpec{Type: typ, Name: name, Path: edgev1alpha1.FolderPath(parent)},
	}
	if typ == edgev1alpha1.TypeTemplate {
		pt.Spec.ImageRef = "app@1.0#linux"
	}
	return pt
}

func getEntry(pt *edgev1alpha1.ProvisionTemplate) (*edgev1alpha1.ProvisionTemplate, error) {
	out := &edgev1alpha1.ProvisionTemplate{}
	return out, k8sClient.Get(ctx, client.ObjectKeyFromObject(pt), out)
}

func parentReady(pt *edgev1alpha1.ProvisionTemplate) func() *metav1.Condition {
	return func() *metav1.Condition {
		e, err := getEntry(pt)
		if err != nil {
			return nil
		}
		return meta.FindStatusCondition(e.Status.Conditions, edgev1alpha1.ConditionParentReady)
	}
}

var _ = Describe("ProvisionTemplate tree", func() {
	It("says whether the parent exists and counts a folder's entries", func() {
		ns := newNamespace()
		orphan := entry(ns, edgev1alpha1.TypeTemplate, "/plant", "reader")
		Expect(k8sClient.Create(ctx, orphan)).To(Succeed())
		Eventually(parentReady(orphan)).Should(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", edgev1alpha1.ReasonParentMissing)))

		plant := entry(ns, edgev1alpha1.TypeFolder, "/", "plant")
		Expect(k8sClient.Create(ctx, plant)).To(Succeed())
		Eventually(parentReady(orphan)).Should(HaveField("Status", metav1.ConditionTrue))
		Eventually(parentReady(plant)).Should(HaveField("Status", metav1.ConditionTrue))
		Expect(k8sClient.Create(ctx, entry(ns, edgev1alpha1.TypeFolder, "/plant", "line-1"))).To(Succeed())
		Eventually(func() int32 { e, _ := getEntry(plant); return e.Status.Children }).Should(Equal(int32(2)))

		By("refusing a second entry of one name in one folder, folder or template")
		err := k8sClient.Create(ctx, entry(ns, edgev1alpha1.TypeFolder, "/plant", "reader"))
		Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "got %v", err)
	})

	It("holds a folder that still has entries until they are deleted", func() {
		ns := newNamespace()
		top := entry(ns, edgev1alpha1.TypeFolder, "/", "site")
		sub := entry(ns, edgev1alpha1.TypeFolder, "/site", "area")
		leaf := entry(ns, edgev1alpha1.TypeTemplate, "/site/area", "cam")
		for _, e := range []*edgev1alpha1.ProvisionTemplate{top, sub, leaf} {
			Expect(k8sClient.Create(ctx, e)).To(Succeed())
		}
		Eventually(func() int32 { e, _ := getEntry(sub); return e.Status.Children }).Should(Equal(int32(1)))

		Expect(k8sClient.Delete(ctx, top)).To(Succeed())
		Eventually(func() *metav1.Condition {
			e, _ := getEntry(top)
			return meta.FindStatusCondition(e.Status.Conditions, "Deleting")
		}).Should(And(HaveField("Reason", edgev1alpha1.ReasonChildrenRemain), HaveField("Message", ContainSubstring("1 entries"))))
		Consistently(func() error { _, err := getEntry(top); return err }, "1s").Should(Succeed())

		By("deleting the entries with it")
		Expect(k8sClient.Delete(ctx, sub)).To(Succeed())
		Expect(k8sClient.Delete(ctx, leaf)).To(Succeed())
		for _, e := range []*edgev1alpha1.ProvisionTemplate{leaf, sub, top} {
			Eventually(func() bool { _, err := getEntry(e); return apierrors.IsNotFound(err) }).Should(BeTrue(), e.Spec.Name)
		}
	})
})
