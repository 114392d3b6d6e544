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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	assignmentwriter "github.com/edgeplane/edgeplane/controllers/edgeservice/assignment"
)

var _ = Describe("The assignment writer", func() {
	It("creates a node's first assignment rather than patching one that is not there, and patches it after", func() {
		node := createNode("aw-first", "linux", nil)
		DeferCleanup(func() {
			a := &edgev1alpha1.NodeAssignment{}
			a.Name = node.Name
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, a))).To(Succeed())
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, node))).To(Succeed())
		})
		entry := func(uid string) *edgev1alpha1.AssignedService {
			return &edgev1alpha1.AssignedService{UID: uid, Revision: 1, Spec: edgev1alpha1.DeploySpec{
				Image: edgev1alpha1.ImageSpec{Ref: "app@1#linux", Path: "r.local/app"}}}
		}
		c := &writeLog{Client: k8sClient}
		Expect(assignmentwriter.WriteNow(ctx, c, c, node.Name, "aw/a", entry("u-a"))).To(Succeed())
		Expect(c.calls).To(Equal([]string{"create"}), "one request, no patch answered 404 first")
		a := &edgev1alpha1.NodeAssignment{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: node.Name}, a)).To(Succeed())
		Expect(a.OwnerReferences).To(ConsistOf(HaveField("UID", node.UID)), "it goes with its node")
		Expect(a.Spec.Services).To(HaveKey("aw/a"))

		Expect(assignmentwriter.WriteNow(ctx, c, c, node.Name, "aw/b", entry("u-b"))).To(Succeed())
		Expect(c.calls).To(Equal([]string{"create", "patch"}))
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: node.Name}, a)).To(Succeed())
		Expect(a.Spec.Services).To(HaveKey("aw/b"))
	})
})

// writeLog is a client that notes each write it makes.
type writeLog struct {
	client.Client
	calls []string
}

func (l *writeLog) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	l.calls = append(l.calls, "create")
	return l.Client.Create(ctx, obj, opts...)
}

func (l *writeLog) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	l.calls = append(l.calls, "patch")
	return l.Client.Patch(ctx, obj, patch, opts...)
}
