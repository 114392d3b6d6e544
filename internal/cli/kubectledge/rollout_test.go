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

package kubectledge_test

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cli/kubectledge"
	"github.com/edgeplane/edgeplane/internal/shared/names"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

var namespaces = 0

// newNamespace makes a namespace of the spec's own.
func newNamespace() string {
	GinkgoHelper()
	namespaces++
	ns := fmt.Sprintf("rollout-%d", namespaces)
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	return ns
}

// records are the revisions the manager recorded for a service.
func records(ns, service string) []int64 {
	GinkgoHelper()
	list := &edgev1alpha1.DeployRecordList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var out []int64
	for _, r := range list.Items {
		if r.Spec.ServiceName == service {
			out = append(out, r.Spec.Revision)
		}
	}
	slices.Sort(out)
	return out
}

// change edits a service's spec and waits for the manager to record it
// as revision rev.
func change(svc *edgev1alpha1.EdgeService, rev int64, edit func(*edgev1alpha1.EdgeService)) {
	GinkgoHelper()
	patch := client.MergeFrom(svc.DeepCopy())
	edit(svc)
	Expect(k8sClient.Patch(ctx, svc, patch)).To(Succeed())
	waitRevision(svc, rev)
}

func waitRevision(svc *edgev1alpha1.EdgeService, rev int64) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		g.Expect(svc.Status.Revision).To(Equal(rev))
	}).Should(Succeed())
}

var _ = Describe("kubectl edge rollout", func() {
	var ns string
	var svc *edgev1alpha1.EdgeService
	BeforeEach(func() {
		ns = newNamespace()
		svc = &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1.0#linux"},
				Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To(int32(1))}}}
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		waitRevision(svc, 1)
		change(svc, 2, func(s *edgev1alpha1.EdgeService) { s.Spec.Image.Ref = "app@1.1#linux" })
		change(svc, 3, func(s *edgev1alpha1.EdgeService) {
			s.Spec.Image.Ref = "app@1.2#linux"
			s.Spec.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{"MODE=edge"}}}
			s.Spec.Cmd = []string{"serve", "--verbose"}
		})
	})

	It("prints the history of revisions, and one revision in full", func() {
		out, err := kubectlEdge("rollout", "history", "es/web", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		matchGolden(out, "history.golden")
		out, err = kubectlEdge("rollout", "history", "edgeservice/web", "--namespace", ns, "--revision=3")
		Expect(err).NotTo(HaveOccurred())
		matchGolden(out, "history-revision.golden")
		_, err = kubectlEdge("rollout", "history", "es/web", "-n", ns, "--revision=7")
		Expect(err).To(MatchError("revision 7 of edgeservice.edge.edgeplane.io/web is not kept; kept: 1, 2, 3"))
	})

	It("returns to the revision before, recorded once as a new revision, and says when there is nothing to do", func() {
		out, err := kubectlEdge("rollout", "undo", "es/web", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal("edgeservice.edge.edgeplane.io/web rolled back to revision 2\n"))
		waitRevision(svc, 4)
		Expect(svc.Spec.Image.Ref).To(BeEquivalentTo("app@1.1#linux"))
		Expect(svc.Spec.Config).To(BeNil(), "what revision 2 did not have is gone")
		Expect(svc.Spec.Cmd).To(BeEmpty())
		Expect(svc.ManagedFields).To(ContainElement(HaveField("Manager", kubectledge.FieldManager)))
		Consistently(func() []int64 { return records(ns, "web") }, 2*time.Second).Should(Equal([]int64{1, 2, 3, 4}), "one record for the rollback")

		out, err = kubectlEdge("rollout", "undo", "es/web", "-n", ns, "--to-revision=2")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal("edgeservice.edge.edgeplane.io/web skipped rollback (current configuration already matches revision 2)\n"))
		Consistently(func() []int64 { return records(ns, "web") }, time.Second).Should(HaveLen(4))

		out, err = kubectlEdge("rollout", "history", "es/web", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		matchGolden(out, "history-after-undo.golden")
	})

	It("refuses what it cannot do, and changes nothing", func() {
		before := svc.DeepCopy()
		_, err := kubectlEdge("rollout", "undo", "es/web", "-n", ns, "--to-revision=9")
		Expect(err).To(MatchError("revision 9 of edgeservice.edge.edgeplane.io/web is not kept; kept: 1, 2, 3"))
		_, err = kubectlEdge("rollout", "undo", "deploy/web", "-n", ns)
		Expect(err).To(MatchError(`"deploy/web" is not an edge service: name one as es/NAME`))
		_, err = kubectlEdge("rollout", "undo", "es/missing", "-n", ns)
		Expect(err).To(MatchError(ContainSubstring(`"missing" not found`)))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		Expect(svc.Generation).To(Equal(before.Generation))
		Expect(records(ns, "web")).To(HaveLen(3))
	})

	It("restores a static service's nodes with its configuration", func() {
		static := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pinned"},
			Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1.0#linux"}},
				Nodes: []string{"edge-a"}}}
		Expect(k8sClient.Create(ctx, static)).To(Succeed())
		waitRevision(static, 1)
		change(static, 2, func(s *edgev1alpha1.EdgeService) { s.Spec.Nodes = []string{"edge-a", "edge-b"} })
		_, err := kubectlEdge("rollout", "undo", "pinned", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		waitRevision(static, 3)
		Expect(static.Spec.Nodes).To(Equal([]string{"edge-a"}))
	})

	It("follows a rollout to its end, and fails on a stall or at its timeout", func() {
		// No node runs linux: the placement fails, and the service says so.
		_, err := kubectlEdge("rollout", "status", "es/web", "-n", ns)
		Expect(err).To(MatchError(ContainSubstring("rollout stalled: edgeservice.edge.edgeplane.io/web revision 3: PlacementFailed: Cannot place every instance")))

		// A node that exists, whose agent has not reported yet: its
		// instance deploys until it does.
		node := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: ns + "-edge-a"}, Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.0.0.1:8080", Type: "linux"}}
		Expect(k8sClient.Create(ctx, node)).To(Succeed())
		pinned := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pinned"},
			Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "app@1.0#linux"}},
				Nodes: []string{node.Name}}}
		Expect(k8sClient.Create(ctx, pinned)).To(Succeed())
		waitRevision(pinned, 1)
		out, err := kubectlEdge("rollout", "status", "es/pinned", "-n", ns, "--timeout=2s")
		Expect(err).To(MatchError("timed out waiting for the rollout of edgeservice.edge.edgeplane.io/pinned to finish: " +
			"Waiting for edgeservice.edge.edgeplane.io/pinned's rollout to finish: 0 of 1 instances run revision 1..."))
		Expect(out).To(Equal("Waiting for edgeservice.edge.edgeplane.io/pinned's rollout to finish: 0 of 1 instances run revision 1...\n"), "one line per state")

		// The agent reports the instance's container running.
		a := &edgev1alpha1.NodeAssignment{}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node.Name}, a)).To(Succeed())
			g.Expect(a.Spec.Services).To(HaveKey(edgev1alpha1.AssignmentKey(ns, "pinned")))
		}).Should(Succeed())
		inst := a.Spec.Services[edgev1alpha1.AssignmentKey(ns, "pinned")].Instances[0]
		Expect(testenv.Report(ctx, k8sClient, node.Name, edgev1alpha1.NodeInfo{Type: "linux", ReadsAssignment: true}, nil,
			edgev1alpha1.ObservedContainer{TaskID: inst.TaskID, Name: inst.Name, Revision: 1, State: edgev1alpha1.ContainerRunning})).To(Succeed())
		out, err = kubectlEdge("rollout", "status", "es/pinned", "-n", ns, "--timeout=20s")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(HaveSuffix("edgeservice.edge.edgeplane.io/pinned successfully rolled out: revision 1, 1 of 1 instances ready\n"))
	})

	It("pauses and resumes a rollout, records neither, and says when there is nothing to do", func() {
		out, err := kubectlEdge("rollout", "pause", "es/web", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal("edgeservice.edge.edgeplane.io/web paused\n"))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		Expect(svc.Spec.Paused).To(BeTrue())
		Expect(svc.ManagedFields).To(ContainElement(HaveField("Manager", kubectledge.FieldManager)))
		_, err = kubectlEdge("rollout", "pause", "es/web", "-n", ns)
		Expect(err).To(MatchError("edgeservice.edge.edgeplane.io/web is already paused"))

		out, err = kubectlEdge("rollout", "resume", "web", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal("edgeservice.edge.edgeplane.io/web resumed\n"))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		Expect(svc.Spec.Paused).To(BeFalse())
		_, err = kubectlEdge("rollout", "resume", "es/web", "-n", ns)
		Expect(err).To(MatchError("edgeservice.edge.edgeplane.io/web is not paused"))
		Consistently(func() []int64 { return records(ns, "web") }, time.Second).Should(Equal([]int64{1, 2, 3}), "a pause is no change of configuration")
	})

	It("explains each command in --help", func() {
		for _, sub := range []string{"history", "status", "undo", "pause", "resume"} {
			out, err := kubectlEdge("rollout", sub, "--help")
			Expect(err).NotTo(HaveOccurred())
			matchGolden(out, "help-"+sub+".golden")
		}
		out, err := kubectlEdge("deploy", "--help")
		Expect(err).NotTo(HaveOccurred())
		matchGolden(out, "help-deploy.golden")
	})
})

var _ = Describe("kubectl edge deploy", func() {
	It("creates a service from a template, and refuses what it cannot make", func() {
		ns := newNamespace()
		templates := newNamespace()
		t := &edgev1alpha1.ProvisionTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: templates, Name: names.Template("/", "sensor-gateway")},
			Spec: edgev1alpha1.ProvisionTemplateSpec{Type: edgev1alpha1.TypeTemplate, Name: "sensor-gateway", Path: "/", ImageRef: "sensor-gateway@1.4.2#linux",
				Defaults: &edgev1alpha1.ServiceDefaults{Cmd: []string{"/bin/gateway"}, PullPolicy: edgev1alpha1.PullAlways,
					Config: &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{"LOG_LEVEL=info"}}}}}}
		Expect(k8sClient.Create(ctx, t)).To(Succeed())

		out, err := kubectlEdge("deploy", "--from-template=/sensor-gateway", "--template-namespace", templates, "--factor=3", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal("edgeservice.edge.edgeplane.io/sensor-gateway created from template /sensor-gateway\n"))
		svc := &edgev1alpha1.EdgeService{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sensor-gateway"}, svc)).To(Succeed())
		Expect(svc.Spec.Image.Ref).To(BeEquivalentTo("sensor-gateway@1.4.2#linux"))
		Expect(svc.Spec.Image.PullPolicy).To(Equal(edgev1alpha1.PullAlways))
		Expect(svc.Spec.Cmd).To(Equal([]string{"/bin/gateway"}))
		Expect(svc.Spec.Config.Linux.Env).To(Equal([]string{"LOG_LEVEL=info"}))
		Expect(svc.Spec.Policy).To(Equal(edgev1alpha1.PolicyDynamic))
		Expect(svc.Spec.Factor).To(HaveValue(BeEquivalentTo(3)))
		waitRevision(svc, 1) // the manager takes it as any service

		out, err = kubectlEdge("deploy", "--from-template=/sensor-gateway/", "--template-namespace", templates, "--nodes=edge-a,edge-b", "--name=pinned", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal("edgeservice.edge.edgeplane.io/pinned created from template /sensor-gateway\n"))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pinned"}, svc)).To(Succeed())
		Expect(svc.Spec.Nodes).To(Equal([]string{"edge-a", "edge-b"}))

		for args, want := range map[string]string{
			"--from-template=/sensor-gateway --factor=1":                                                   "no template /sensor-gateway in namespace " + ns + " (--template-namespace names another)",
			"--from-template=/sensor-gateway --factor=1 --template-namespace " + templates:                 "edgeservice.edge.edgeplane.io/sensor-gateway already exists in namespace " + ns + "; give another with --name",
			"--from-template=/sensor-gateway --factor=1 --nodes=a --template-namespace " + templates:       "give --nodes (a static service) or --factor (a dynamic one), not both",
			"--from-template=/sensor-gateway --template-namespace " + templates:                            "give --nodes (a static service on those nodes) or --factor (a dynamic one of that many instances)",
			"--from-template=/sensor-gateway --factor=1 --name=Bad_Name --template-namespace " + templates: `"Bad_Name" cannot name a service (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters`,
			"--from-template=/ --factor=1":                                                                 "--from-template names the root folder; name a template: /FOLDER/NAME",
			"--from-template=plant --factor=1":                                                             `--from-template "plant": path must be absolute, starting with /`,
			"--factor=1":                                                                                   "--from-template is required: the template's path, /FOLDER/NAME",
		} {
			_, err := kubectlEdge(append([]string{"deploy", "-n", ns}, strings.Fields(args)...)...)
			Expect(err).To(MatchError(HavePrefix(want)), args)
		}
		list := &edgev1alpha1.EdgeServiceList{}
		Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(2), "a refusal creates nothing")
	})
})
