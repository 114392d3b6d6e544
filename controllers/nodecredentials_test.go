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
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/registryauth"
)

// pullSecret is a Secret of type kubernetes.io/dockerconfigjson for one
// registry.
func pullSecret(ns, name, registry, user, password string) *corev1.Secret {
	data, err := json.Marshal(registryauth.Config{Auths: map[string]registryauth.Entry{registry: {Username: user, Password: password}}})
	Expect(err).NotTo(HaveOccurred())
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: data},
	}
}

// nodeCredentials is a node's credentials Secret; nil while there is none.
func nodeCredentials(node string) *corev1.Secret {
	s := &corev1.Secret{}
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: opts.LeaseNamespace, Name: node}, s); err != nil {
		Expect(apierrors.IsNotFound(err)).To(BeTrue())
		return nil
	}
	return s
}

// dataOf polls a node's credentials; a node without its Secret fails the poll.
func dataOf(node string) func(Gomega) map[string][]byte {
	return func(g Gomega) map[string][]byte {
		s := nodeCredentials(node)
		g.Expect(s).NotTo(BeNil(), "the node's credentials Secret exists")
		return s.Data
	}
}

// userOf is the registry user a node's Secret holds for a service.
func userOf(node, ns, svc, registry string) func() string {
	return func() string {
		s := nodeCredentials(node)
		if s == nil {
			return "<no secret>"
		}
		data, ok := s.Data[edgev1alpha1.NodeCredentialsKey(ns, svc)]
		if !ok {
			return "<no key>"
		}
		c, err := registryauth.Parse(data)
		Expect(err).NotTo(HaveOccurred())
		e, _, found, err := registryauth.For(c, registry+"/app:1")
		Expect(err).NotTo(HaveOccurred())
		if !found {
			return "<no entry>"
		}
		return e.Username + ":" + e.Password
	}
}

var _ = Describe("Node credentials", func() {
	It("copy a service's pull Secrets into the Secret of each node it runs on, follow rotation and placement, and empty when none remain", func() {
		ns := newNamespace()
		a, b := createNode("cred-a", "linux", nil), createNode("cred-b", "linux", nil)
		createNode("cred-plain", "linux", nil)
		const registry = "registry.plant-a.local:5000"
		Expect(k8sClient.Create(ctx, pullSecret(ns, "regcred", registry, "robot", "one"))).To(Succeed())
		// Only the first Secret that has a registry counts for it.
		Expect(k8sClient.Create(ctx, pullSecret(ns, "fallback", registry, "other", "two"))).To(Succeed())
		svc := newStatic(ns, "private", "cred-a")
		svc.Spec.Image.PullSecretRefs = []edgev1alpha1.LocalSecretReference{{Name: "regcred"}, {Name: "fallback"}}
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		Expect(k8sClient.Create(ctx, newStatic(ns, "public", "cred-plain"))).To(Succeed())

		Eventually(userOf("cred-a", ns, "private", registry)).Should(Equal("robot:one"))
		s := nodeCredentials("cred-a")
		Expect(s.Type).To(BeEquivalentTo(edgev1alpha1.SecretTypeNodeCredentials))
		Expect(s.OwnerReferences).To(ConsistOf(And(HaveField("UID", a.UID), HaveField("Kind", "EdgeNode"))), "owned by its node, gone with it")
		Expect(s.Data).To(HaveLen(1))
		Expect(nodeCredentials("cred-b")).To(BeNil(), "a node with no such service gets no Secret")
		Consistently(func() *corev1.Secret { return nodeCredentials("cred-plain") }, "1s").Should(BeNil(), "nor one whose services pull without credentials")

		By("rotating the pull Secret")
		Expect(k8sClient.Update(ctx, pullSecret(ns, "regcred", registry, "robot", "rotated"))).To(Succeed())
		Eventually(userOf("cred-a", ns, "private", registry)).Should(Equal("robot:rotated"))

		By("moving the service to another node")
		update(svc, func(s *edgev1alpha1.EdgeService) { s.Spec.Nodes = []string{"cred-b"} })
		Eventually(userOf("cred-b", ns, "private", registry)).Should(Equal("robot:rotated"))
		Eventually(dataOf("cred-a")).Should(BeEmpty(), "emptied when none remain")
		Expect(nodeCredentials("cred-b").OwnerReferences).To(ConsistOf(HaveField("UID", b.UID)))

		By("a person editing or deleting the node's Secret")
		tampered := nodeCredentials("cred-b")
		tampered.Data[edgev1alpha1.NodeCredentialsKey(ns, "private")] = []byte(`{"auths":{}}`)
		tampered.Data[edgev1alpha1.NodeCredentialsKey(ns, "smuggled")] = []byte(`{"auths":{}}`)
		Expect(k8sClient.Update(ctx, tampered)).To(Succeed())
		Eventually(userOf("cred-b", ns, "private", registry)).Should(Equal("robot:rotated"))
		Eventually(dataOf("cred-b")).Should(HaveLen(1), "a key added by hand is not kept")
		Expect(k8sClient.Delete(ctx, nodeCredentials("cred-b"))).To(Succeed())
		Eventually(userOf("cred-b", ns, "private", registry)).Should(Equal("robot:rotated"))

		By("deleting the service")
		Expect(k8sClient.Delete(ctx, getService(ns, "private"))).To(Succeed())
		Eventually(dataOf("cred-b")).Should(BeEmpty())
	})
})
