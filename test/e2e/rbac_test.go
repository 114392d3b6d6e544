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

package e2e_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

var _ = Describe("An agent with the RBAC of edge-agent --print-rbac", func() {
	It("runs its own node and may not touch another", func() {
		const node = "edge-rbac-01"
		o := agent.DefaultOptions()
		Expect(k8sClient.Create(ctx, &edgev1alpha1.EdgeNode{
			ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.9.1:7200", Type: "linux", Arch: "amd64"},
		})).To(Succeed(), "an agent limited to its node cannot create it")

		By("applying the admission policy config/default ships")
		policy, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "lease", "agent-policy.yaml"))
		Expect(err).NotTo(HaveOccurred())
		objs, err := testenv.DecodeYAML(policy)
		Expect(err).NotTo(HaveOccurred())
		for _, u := range objs {
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
		}

		By("applying the printed manifests")
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(agent.RBAC(node, o.LeaseNamespace)), 4096)
		for {
			u := &unstructured.Unstructured{}
			err := dec.Decode(&u.Object)
			if err == io.EOF {
				break
			}
			Expect(err).NotTo(HaveOccurred())
			if len(u.Object) > 0 {
				Expect(k8sClient.Create(ctx, u)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
			}
		}
		cs, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		tr, err := cs.CoreV1().ServiceAccounts(o.LeaseNamespace).CreateToken(ctx, "edge-agent-"+node,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		saCfg := rest.AnonymousClientConfig(cfg)
		saCfg.BearerToken = tr.Status.Token

		By("running the agent as that ServiceAccount")
		actx, stop := context.WithCancel(ctx)
		defer stop()
		o.Log = GinkgoLogr
		o.Nodes = []agent.Node{{Name: node, Type: "linux", Arch: "amd64", Address: "10.0.9.1:7200"}}
		o.RenewInterval, o.Tick, o.NewRuntime = 500*time.Millisecond, 100*time.Millisecond, sim.Runtimes(sim.DefaultOptions())
		go func() { _ = agent.Run(actx, saCfg, o) }()
		Eventually(func() any { return byName(list("/api/v1/node", "name", node), "name")[node]["status"] }).Should(Equal("online"))
		Eventually(func() any { return byName(list("/api/v1/node", "name", node), "name")[node]["containerTotal"] }).Should(BeNumerically("==", 1))

		By("being refused another node's status and Lease")
		sa, err := client.New(saCfg, client.Options{Scheme: testenv.Scheme})
		Expect(err).NotTo(HaveOccurred())
		other := &edgev1alpha1.EdgeNode{}
		// Another agent of the suite registers it; specs run in any order.
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKey{Name: "edge-linux-01"}, other) }).Should(Succeed())
		patch := client.MergeFrom(other.DeepCopy())
		other.Status.Containers = nil
		Expect(apierrors.IsForbidden(sa.Status().Patch(ctx, other, patch))).To(BeTrue())
		Expect(apierrors.IsForbidden(sa.Get(ctx, client.ObjectKey{Namespace: o.LeaseNamespace, Name: "edge-linux-01"}, &coordinationv1.Lease{}))).To(BeTrue())

		By("deploying with its own node's registry credentials, and being refused another node's")
		const second = "edge-rbac-02"
		Expect(k8sClient.Create(ctx, &edgev1alpha1.EdgeNode{
			ObjectMeta: metav1.ObjectMeta{Name: second}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.9.2:7200", Type: "linux", Arch: "amd64"},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "rbac-regcred"},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.plant-a.local":{"username":"robot","password":"pw"}}}`)},
		})).To(Succeed())
		for _, n := range []string{node, second} {
			Expect(k8sClient.Create(ctx, &edgev1alpha1.EdgeService{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "private-" + n},
				Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{
					Ref: "private@1#linux", PullSecretRefs: []edgev1alpha1.LocalSecretReference{{Name: "rbac-regcred"}}}}, Nodes: []string{n}},
			})).To(Succeed())
		}
		Eventually(func() any { return statuses(containersOf("private-" + node)) }).Should(Equal([]any{"success"}),
			"the agent read its node's credentials, with its own RBAC, before it created the container")
		registered := &edgev1alpha1.EdgeNode{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node}, registered)).To(Succeed())
		Expect(registered.Status.NodeInfo.ReadsAssignment).To(BeTrue(), "the agent says it reads its assignment")
		svc := &edgev1alpha1.EdgeService{}
		// The facade derives the instance's state from the report; the
		// service's counts follow it at the reconcile after the report.
		Eventually(func() int32 {
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "private-" + node}, svc)).To(Succeed())
			return svc.Status.ReadyReplicas
		}).Should(BeEquivalentTo(1))
		Expect(svc.Status.Containers).To(BeEmpty(), "the agent reads its instance from its assignment, not from the service")
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: o.LeaseNamespace, Name: second}, &corev1.Secret{})
		}).Should(Succeed(), "the manager made the other node's credentials")
		Expect(sa.Get(ctx, client.ObjectKey{Namespace: o.LeaseNamespace, Name: node}, &corev1.Secret{})).To(Succeed())
		Expect(sa.Get(ctx, client.ObjectKey{Namespace: o.LeaseNamespace, Name: second}, &corev1.Secret{})).To(WithTransform(apierrors.IsForbidden, BeTrue()))
		Expect(sa.List(ctx, &corev1.SecretList{}, client.InNamespace(o.LeaseNamespace))).To(WithTransform(apierrors.IsForbidden, BeTrue()))

		By("reading its own node's assignment, and being refused another node's and every service")
		Expect(sa.Get(ctx, client.ObjectKey{Name: node}, &edgev1alpha1.NodeAssignment{})).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Name: second}, &edgev1alpha1.NodeAssignment{})
		}).Should(Succeed())
		Expect(sa.Get(ctx, client.ObjectKey{Name: second}, &edgev1alpha1.NodeAssignment{})).To(WithTransform(apierrors.IsForbidden, BeTrue()))
		Expect(sa.List(ctx, &edgev1alpha1.NodeAssignmentList{})).To(WithTransform(apierrors.IsForbidden, BeTrue()))
		Expect(sa.List(ctx, &edgev1alpha1.NodeAssignmentList{}, client.MatchingFields{"metadata.name": second})).To(WithTransform(apierrors.IsForbidden, BeTrue()))
		Expect(sa.List(ctx, &edgev1alpha1.NodeAssignmentList{}, client.MatchingFields{"metadata.name": node})).To(Succeed(), "its own, by name, as its watch lists it")
		Expect(sa.List(ctx, &edgev1alpha1.EdgeServiceList{})).To(WithTransform(apierrors.IsForbidden, BeTrue()))
		Expect(sa.Get(ctx, client.ObjectKey{Namespace: "default", Name: "private-" + node}, &edgev1alpha1.EdgeService{})).To(WithTransform(apierrors.IsForbidden, BeTrue()),
			"not even the services it runs: their configuration comes in its assignment")
		for _, n := range []string{node, second} {
			Expect(k8sClient.Delete(ctx, &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "private-" + n}})).To(Succeed())
		}
		// An offline node more would make the others' zone look partitioned.
		Expect(k8sClient.Delete(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: second}})).To(Succeed())

		By("being refused the creation of another node's Lease, which RBAC alone would allow")
		forged := func() *coordinationv1.Lease {
			return &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: o.LeaseNamespace, Name: "edge-rbac-forged"},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("edge-rbac-forged"), RenewTime: ptr.To(metav1.NowMicro())},
			}
		}
		// The API server loads a new policy asynchronously: wait for it with
		// dry runs, which pass admission but store nothing.
		Eventually(func() error { return sa.Create(ctx, forged(), client.DryRunAll) }).Should(WithTransform(apierrors.IsForbidden, BeTrue()))
		Expect(sa.Create(ctx, forged())).To(And(
			WithTransform(apierrors.IsForbidden, BeTrue()),
			MatchError(ContainSubstring("may write only its own node and Lease")),
		), "the admission policy holds the agent to its node")
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: o.LeaseNamespace, Name: "edge-rbac-forged"}, &coordinationv1.Lease{}))).To(BeTrue())
		Consistently(func() any { return byName(list("/api/v1/node", "name", node), "name")[node]["status"] }, 2*time.Second).Should(Equal("online"),
			"and its own Lease still renews")
	})
})
