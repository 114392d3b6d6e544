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

package v1alpha1_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/imageref"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

func staticService(mutate func(*edgev1alpha1.EdgeService)) *edgev1alpha1.EdgeService {
	s := &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "svc-", Namespace: "default"},
		Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "nginx@1.25#linux"}}, Nodes: []string{"edge-1"}},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func rollingUpdate(maxUnavailable intstr.IntOrString, canary *intstr.IntOrString) edgev1alpha1.ServiceStrategy {
	return edgev1alpha1.ServiceStrategy{Type: edgev1alpha1.StrategyRollingUpdate,
		RollingUpdate: &edgev1alpha1.RollingUpdateStrategy{MaxUnavailable: &maxUnavailable, Canary: canary}}
}

func dynamicService(factor int32) *edgev1alpha1.EdgeService {
	return staticService(func(s *edgev1alpha1.EdgeService) {
		s.Spec.Policy = edgev1alpha1.PolicyDynamic
		s.Spec.Nodes = nil
		s.Spec.Factor = ptr.To(factor)
	})
}

func folder(name, path string) *edgev1alpha1.ProvisionTemplate {
	return &edgev1alpha1.ProvisionTemplate{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pt-", Namespace: "default"},
		Spec:       edgev1alpha1.ProvisionTemplateSpec{Type: edgev1alpha1.TypeFolder, Name: name, Path: edgev1alpha1.FolderPath(path)},
	}
}

func record(name string) *edgev1alpha1.DeployRecord {
	return &edgev1alpha1.DeployRecord{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       edgev1alpha1.DeployRecordSpec{ServiceName: "svc", Revision: 1, DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: "nginx@1.25#linux", PullPolicy: edgev1alpha1.PullIfNotPresent}}},
	}
}

// expectInvalid asserts that the API server refused the write as Invalid
// and that its message says why.
func expectInvalid(err error, message string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	Expect(err.Error()).To(ContainSubstring(message))
}

// readSamples decodes every object of config/samples.
func readSamples() []*unstructured.Unstructured {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "edge_*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty())
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else {
				Expect(err).NotTo(HaveOccurred(), f)
			}
			if len(u.Object) > 0 {
				objs = append(objs, u)
			}
		}
	}
	return objs
}

var _ = Describe("Samples", func() {
	It("are accepted by the API server, one or more of every kind", func() {
		kinds := map[string]int{}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "samples-"}}
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())
		for _, u := range readSamples() {
			if u.GetKind() != "EdgeNode" {
				u.SetNamespace(ns.Name)
			}
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
			kinds[u.GetKind()]++
		}
		Expect(kinds).To(HaveKey("EdgeNode"))
		Expect(kinds).To(HaveKey("EdgeService"))
		Expect(kinds).To(HaveKey("DeployRecord"))
		Expect(kinds).To(HaveKey("ProvisionTemplate"))

		By("listing them all through the edge category")
		out, err := kubectl("get", "edge", "-A", "-o", "name")
		Expect(err).NotTo(HaveOccurred(), out)
		for _, want := range []string{"edgenode.edge.edgeplane.io/edge-linux-01", "edgeservice.edge.edgeplane.io/sensor-gateway", "deployrecord.edge.edgeplane.io/sensor-gateway-1", "provisiontemplate.edge.edgeplane.io/plant-a"} {
			Expect(out).To(ContainSubstring(want))
		}

		By("showing the printer columns")
		out, err = kubectl("get", "en", "edge-linux-01")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.Fields(strings.Split(out, "\n")[0])).To(Equal([]string{"NAME", "STATUS", "TYPE", "ARCH", "RUNTIME", "RUNNING", "TOTAL", "AGE"}))
		out, err = kubectl("get", "es", "-n", ns.Name)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.Fields(strings.Split(out, "\n")[0])).To(Equal([]string{"NAME", "POLICY", "READY", "AVAILABLE", "DESIRED", "UP-TO-DATE", "REVISION", "PROGRESS", "AGE"}))
		out, err = kubectl("get", "dr", "-n", ns.Name)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.Fields(strings.Split(out, "\n")[0])).To(Equal([]string{"NAME", "SERVICE", "REVISION", "IMAGE", "AGE"}))
		out, err = kubectl("get", "pt", "-n", ns.Name)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.Fields(strings.Split(out, "\n")[0])).To(Equal([]string{"NAME", "TYPE", "NAME", "PATH", "READY", "AGE"}))
	})
})

var _ = Describe("EdgeService schema", func() {
	It("fills in the documented defaults", func() {
		s := staticService(nil)
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Expect(s.Spec.Path).To(Equal(edgev1alpha1.FolderPath("/")))
		Expect(s.Spec.Action).To(Equal(edgev1alpha1.ActionRun))
		Expect(s.Spec.Policy).To(Equal(edgev1alpha1.PolicyStatic))
		Expect(s.Spec.Image.AutoUpgrade).To(Equal(edgev1alpha1.AutoUpgradeNever))
		Expect(s.Spec.RevisionHistoryLimit).To(Equal(ptr.To[int32](10)))
		// pullPolicy depends on the tag, which a CRD default cannot express:
		// it stays empty and resolves in code.
		Expect(s.Spec.Image.PullPolicy).To(BeEmpty())
		Expect(s.Spec.Image.EffectivePullPolicy()).To(Equal(edgev1alpha1.PullIfNotPresent))
		s.Spec.Image.Ref = "nginx@latest#linux"
		Expect(s.Spec.Image.EffectivePullPolicy()).To(Equal(edgev1alpha1.PullAlways))
	})

	DescribeTable("rejects a bad service with a clear message",
		func(mutate func(*edgev1alpha1.EdgeService), message string) {
			s := staticService(mutate)
			expectInvalid(k8sClient.Create(ctx, s), message)
		},
		Entry("image ref without os", func(s *edgev1alpha1.EdgeService) { s.Spec.Image.Ref = "nginx@1.25" }, "must have the form name@tag#os"),
		Entry("image ref in docker form", func(s *edgev1alpha1.EdgeService) { s.Spec.Image.Ref = "nginx:1.25" }, "must have the form name@tag#os"),
		Entry("static without nodes", func(s *edgev1alpha1.EdgeService) { s.Spec.Nodes = nil }, "a static service needs at least one node"),
		Entry("static with factor", func(s *edgev1alpha1.EdgeService) { s.Spec.Factor = ptr.To[int32](2) }, "factor is for dynamic services"),
		Entry("static with node selector", func(s *edgev1alpha1.EdgeService) { s.Spec.NodeSelector = &metav1.LabelSelector{} }, "nodeSelector is for dynamic services"),
		Entry("dynamic without factor", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Policy, s.Spec.Nodes = edgev1alpha1.PolicyDynamic, nil
		}, "a dynamic service needs factor of at least 1"),
		Entry("dynamic with factor 0", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Policy, s.Spec.Nodes, s.Spec.Factor = edgev1alpha1.PolicyDynamic, nil, ptr.To[int32](0)
		}, "a dynamic service needs factor of at least 1"),
		Entry("dynamic with nodes", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Policy, s.Spec.Factor = edgev1alpha1.PolicyDynamic, ptr.To[int32](1)
		}, "nodes is for static services"),
		Entry("unknown policy", func(s *edgev1alpha1.EdgeService) { s.Spec.Policy = "random" }, `Unsupported value: "random"`),
		Entry("unknown action", func(s *edgev1alpha1.EdgeService) { s.Spec.Action = "start" }, `Unsupported value: "start"`),
		Entry("unknown pull policy", func(s *edgev1alpha1.EdgeService) { s.Spec.Image.PullPolicy = "Sometimes" }, `Unsupported value: "Sometimes"`),
		Entry("unknown auto-upgrade", func(s *edgev1alpha1.EdgeService) { s.Spec.Image.AutoUpgrade = "Smaller" }, `Unsupported value: "Smaller"`),
		Entry("pull Secret name that is no Secret name", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Image.PullSecretRefs = []edgev1alpha1.LocalSecretReference{{Name: "Reg_Cred"}}
		}, "spec.image.pullSecretRefs[0].name"),
		Entry("more than 8 pull Secrets", func(s *edgev1alpha1.EdgeService) {
			for i := range 9 {
				s.Spec.Image.PullSecretRefs = append(s.Spec.Image.PullSecretRefs, edgev1alpha1.LocalSecretReference{Name: fmt.Sprintf("cred-%d", i)})
			}
		}, "must have at most 8 items"),
		Entry("relative path", func(s *edgev1alpha1.EdgeService) { s.Spec.Path = "plant/a" }, "must be an absolute path"),
		Entry("path with trailing slash", func(s *edgev1alpha1.EdgeService) { s.Spec.Path = "/plant/" }, "must be an absolute path"),
		Entry("path with empty segment", func(s *edgev1alpha1.EdgeService) { s.Spec.Path = "/plant//a" }, "must be an absolute path"),
		Entry("path with ..", func(s *edgev1alpha1.EdgeService) { s.Spec.Path = "/plant/../a" }, "must not contain . or .. segments"),
		Entry("path with .", func(s *edgev1alpha1.EdgeService) { s.Spec.Path = "/./a" }, "must not contain . or .. segments"),
		Entry("path with control character", func(s *edgev1alpha1.EdgeService) { s.Spec.Path = "/plant\ta" }, "must not contain control characters"),
		Entry("both linux and embedded config", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{}, Embedded: &edgev1alpha1.EmbeddedConfig{}}
		}, "set at most one of linux and embedded"),
		Entry("env without NAME=", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: []string{"1BAD"}}}
		}, "spec.config.linux.env[0]"),
		Entry("unknown restart policy", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Restart: "sometimes"}}
		}, `Unsupported value: "sometimes"`),
		Entry("vsoa port out of range", func(s *edgev1alpha1.EdgeService) {
			s.Spec.VSOA = &edgev1alpha1.VSOAConfig{Port: 70000}
		}, "spec.vsoa.port"),
		Entry("revision history limit 0", func(s *edgev1alpha1.EdgeService) {
			s.Spec.RevisionHistoryLimit = ptr.To[int32](0)
		}, "spec.revisionHistoryLimit"),
		Entry("unknown strategy", func(s *edgev1alpha1.EdgeService) { s.Spec.Strategy.Type = "Recreate" }, `Unsupported value: "Recreate"`),
		Entry("rollingUpdate on all at once", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Strategy = edgev1alpha1.ServiceStrategy{Type: edgev1alpha1.StrategyAllAtOnce, RollingUpdate: &edgev1alpha1.RollingUpdateStrategy{}}
		}, "rollingUpdate is for type RollingUpdate"),
		Entry("maxUnavailable 0, which would never move an instance", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Strategy = rollingUpdate(intstr.FromInt32(0), nil)
		}, "a count of at least 1 or a percent from 0% to 100%"),
		Entry("maxUnavailable above 100%", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Strategy = rollingUpdate(intstr.FromString("150%"), nil)
		}, "a count of at least 1 or a percent from 0% to 100%"),
		Entry("maxUnavailable a word", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Strategy = rollingUpdate(intstr.FromString("half"), nil)
		}, "a count of at least 1 or a percent from 0% to 100%"),
		Entry("a negative canary", func(s *edgev1alpha1.EdgeService) {
			s.Spec.Strategy = rollingUpdate(intstr.FromInt32(1), ptr.To(intstr.FromInt32(-1)))
		}, "a count of at least 0 or a percent from 0% to 100%"),
		Entry("progress deadline 0", func(s *edgev1alpha1.EdgeService) {
			s.Spec.ProgressDeadlineSeconds = ptr.To[int32](0)
		}, "spec.progressDeadlineSeconds"),
	)

	It("defaults a rolling update to 25% unavailable and a progress deadline of ten minutes, and accepts counts and percents", func() {
		s := staticService(func(s *edgev1alpha1.EdgeService) {
			s.Spec.Strategy = edgev1alpha1.ServiceStrategy{Type: edgev1alpha1.StrategyRollingUpdate, RollingUpdate: &edgev1alpha1.RollingUpdateStrategy{}}
		})
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Expect(s.Spec.Strategy.RollingUpdate.MaxUnavailable).To(Equal(ptr.To(intstr.FromString("25%"))))
		Expect(s.Spec.ProgressDeadlineSeconds).To(Equal(ptr.To[int32](600)))
		Expect(s.Spec.Paused).To(BeFalse())
		for _, st := range []edgev1alpha1.ServiceStrategy{
			rollingUpdate(intstr.FromInt32(3), ptr.To(intstr.FromString("10%"))),
			rollingUpdate(intstr.FromString("100%"), ptr.To(intstr.FromInt32(0))),
		} {
			Expect(k8sClient.Create(ctx, staticService(func(s *edgev1alpha1.EdgeService) { s.Spec.Strategy = st }))).To(Succeed())
		}
	})

	It("accepts exactly the image refs the facade's parser accepts", func() {
		for _, ref := range []string{
			"nginx@1.25#linux", "sensor/reader@2.0.1-rc1#sylixos", "a.b_c-d@latest#linux", "x@_#l",
			"nginx", "nginx@1.25", "nginx#linux", "Nginx@1#linux", "nginx@1#Linux", "nginx@@1#linux",
			"/nginx@1#linux", "nginx@.1#linux", "nginx@1#linux#x", "ng..inx@1#linux", "nginx/@1#linux",
			"nginx@1#linux ", "nginx@" + strings.Repeat("t", 129) + "#linux",
		} {
			_, parseErr := imageref.Parse(ref)
			err := k8sClient.Create(ctx, staticService(func(s *edgev1alpha1.EdgeService) {
				s.Spec.Image.Ref = edgev1alpha1.ImageRef(ref)
			}))
			Expect(err == nil).To(Equal(parseErr == nil), "ref %q: API server said %v, parser said %v", ref, err, parseErr)
		}
	})

	It("scales a dynamic service through the scale subresource", func() {
		s := dynamicService(2)
		Expect(k8sClient.Create(ctx, s)).To(Succeed())

		scale := &autoscalingv1.Scale{}
		Expect(k8sClient.SubResource("scale").Get(ctx, s, scale)).To(Succeed())
		Expect(scale.Spec.Replicas).To(Equal(int32(2)))

		scale.Spec.Replicas = 5
		Expect(k8sClient.SubResource("scale").Update(ctx, s, client.WithSubResourceBody(scale))).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		Expect(s.Spec.Factor).To(Equal(ptr.To[int32](5)))

		By("refusing to scale to zero")
		scale.Spec.Replicas = 0
		expectInvalid(k8sClient.SubResource("scale").Update(ctx, s, client.WithSubResourceBody(scale)), "a dynamic service needs factor of at least 1")
	})

	It("tracks the status the controller writes as one field, however many conditions it holds", func() {
		s := staticService(nil)
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		base := client.MergeFrom(s.DeepCopy())
		for _, t := range []string{"Available", "Progressing", "Degraded", "Ready"} {
			s.Status.Conditions = append(s.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: "Test",
				Message: "set by the test", LastTransitionTime: metav1.Now()})
		}
		Expect(k8sClient.Status().Patch(ctx, s, base, client.FieldOwner("schema-test"))).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		Expect(s.Status.Conditions).To(HaveLen(4))
		var status *metav1.ManagedFieldsEntry
		for i, mf := range s.ManagedFields {
			if mf.Manager == "schema-test" && mf.Subresource == "status" {
				status = &s.ManagedFields[i]
			}
		}
		Expect(status).NotTo(BeNil())
		Expect(string(status.FieldsV1.Raw)).To(MatchJSON(`{"f:status":{}}`), "no entry per field or condition")
	})

	It("refuses to scale a static service", func() {
		s := staticService(nil)
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
		expectInvalid(k8sClient.SubResource("scale").Update(ctx, s, client.WithSubResourceBody(scale)), "factor is for dynamic services")
		out, err := kubectl("scale", "-n", s.Namespace, "edgeservice/"+s.Name, "--replicas=3")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("factor is for dynamic services"))
	})

	It("documents its fields for kubectl explain", func() {
		out, err := kubectl("explain", "edgeservice.spec")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("path is the service's folder in the path-label tree"))
		Expect(out).To(ContainSubstring("revisionHistoryLimit is how many DeployRecords are kept"))
		out, err = kubectl("explain", "edgeservice.spec.image.ref")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("ref is the image as name@tag#os"))
	})
})

var _ = Describe("EdgeNode schema", func() {
	node := func(name, address string) *edgev1alpha1.EdgeNode {
		return &edgev1alpha1.EdgeNode{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       edgev1alpha1.EdgeNodeSpec{Address: address},
		}
	}

	It("accepts host:port addresses, IPv6 included", func() {
		for i, addr := range []string{"10.0.0.7:8080", "edge-7.plant.local:7200", "[fd00::7]:8080"} {
			Expect(k8sClient.Create(ctx, node("addr-ok-"+string(rune('a'+i)), addr))).To(Succeed(), addr)
		}
	})

	It("rejects an address without a port", func() {
		expectInvalid(k8sClient.Create(ctx, node("addr-bad", "10.0.0.7")), "spec.address: Invalid value: \"10.0.0.7\": must be host:port, for example 10.0.0.7:8080 or [fd00::7]:8080")
	})

	It("accepts a node added by its name alone, and an address its agent reports, checked as spec.address is", func() {
		n := node("addr-none", "")
		Expect(k8sClient.Create(ctx, n)).To(Succeed())
		Expect(n.Spec.Address).To(BeEmpty())
		Expect(n.Address()).To(BeEmpty(), "no address until its agent reports one")

		n.Status.NodeInfo = &edgev1alpha1.NodeInfo{Address: "10.0.0.7"}
		expectInvalid(k8sClient.Status().Update(ctx, n), "status.nodeInfo.address: Invalid value: \"10.0.0.7\": must be host:port")
		n.Status.NodeInfo.Address = "[fd00::7]:7200"
		Expect(k8sClient.Status().Update(ctx, n)).To(Succeed())
		Expect(n.Address()).To(Equal("[fd00::7]:7200"))

		By("letting the operator's address win over the reported one")
		n.Spec.Address = "edge-7.plant.local:8080"
		Expect(k8sClient.Update(ctx, n)).To(Succeed())
		Expect(n.Address()).To(Equal("edge-7.plant.local:8080"))
		Expect(n.Status.NodeInfo.Address).To(Equal("[fd00::7]:7200"))
		out, err := kubectl("get", "en", "addr-none", "-o", "wide")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(MatchRegexp(`ADDRESS\s+REPORTED ADDRESS`))
		Expect(out).To(MatchRegexp(`edge-7\.plant\.local:8080\s+\[fd00::7\]:7200`))
	})

	It("checks an address in Go as the schema does", func() {
		for i, addr := range []string{"10.0.0.7:8080", "edge-7.plant.local:7200", "[fd00::7]:8080", "10.0.0.7", "nowhere", "-edge:80", "[fd00::7]", "edge 7:80",
			strings.Repeat("c", 258) + ":80", strings.Repeat("c", 259) + ":80"} {
			err := k8sClient.Create(ctx, node(fmt.Sprintf("addr-go-%d", i), addr))
			Expect(err == nil).To(Equal(edgev1alpha1.ValidAddress(addr)), "%q: %v", addr, err)
		}
	})

	It("rejects unknown node and container states in status", func() {
		n := node("status-bad", "10.0.0.8:8080")
		Expect(k8sClient.Create(ctx, n)).To(Succeed())
		n.Status.Status = "sleeping"
		expectInvalid(k8sClient.Status().Update(ctx, n), `Unsupported value: "sleeping"`)
		n.Status.Status = edgev1alpha1.NodeOnline
		n.Status.Containers = []edgev1alpha1.ObservedContainer{{Name: "c1", State: "dead"}}
		expectInvalid(k8sClient.Status().Update(ctx, n), `Unsupported value: "dead"`)
		n.Status.Containers[0].State = edgev1alpha1.ContainerRunning
		Expect(k8sClient.Status().Update(ctx, n)).To(Succeed())
	})

})

var _ = Describe("DeployRecord schema", func() {
	It("refuses any change of spec but allows status", func() {
		r := record("immutable-1")
		Expect(k8sClient.Create(ctx, r)).To(Succeed())

		changed := r.DeepCopy()
		changed.Spec.Image.Ref = "nginx@1.26#linux"
		expectInvalid(k8sClient.Update(ctx, changed), "DeployRecord spec is immutable")

		patch := client.MergeFrom(r.DeepCopy())
		r.Spec.Cmd = []string{"sh"}
		expectInvalid(k8sClient.Patch(ctx, r, patch), "DeployRecord spec is immutable")

		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
		Expect(r.Spec.Image.Ref).To(Equal(edgev1alpha1.ImageRef("nginx@1.25#linux")))
		Expect(r.Spec.Cmd).To(BeEmpty())

		By("having no status to write: a record is a log entry, written once")
		Expect(apierrors.IsNotFound(k8sClient.Status().Update(ctx, r))).To(BeTrue(), "deployrecords/status does not exist")
	})

	It("tracks the spec its creator wrote as one field", func() {
		r := record("owned-1")
		Expect(k8sClient.Create(ctx, r, client.FieldOwner("schema-test"))).To(Succeed())
		var spec string
		for _, mf := range r.ManagedFields {
			if mf.Manager == "schema-test" {
				spec = string(mf.FieldsV1.Raw)
			}
		}
		Expect(spec).To(ContainSubstring(`"f:spec":{}`))
		Expect(spec).NotTo(ContainSubstring("f:image"), "no entry per field of the spec")
	})

	It("rejects a revision below 1", func() {
		r := record("revision-0")
		r.Spec.Revision = 0
		expectInvalid(k8sClient.Create(ctx, r), "spec.revision")
	})
})

var _ = Describe("ProvisionTemplate schema", func() {
	It("defaults the parent path to the root", func() {
		f := folder("top", "")
		Expect(k8sClient.Create(ctx, f)).To(Succeed())
		Expect(f.Spec.Path).To(Equal(edgev1alpha1.FolderPath("/")))
	})

	DescribeTable("rejects a bad entry with a clear message",
		func(mutate func(*edgev1alpha1.ProvisionTemplate), message string) {
			f := folder("f", "/plant")
			mutate(f)
			expectInvalid(k8sClient.Create(ctx, f), message)
		},
		Entry("template without image", func(p *edgev1alpha1.ProvisionTemplate) { p.Spec.Type = edgev1alpha1.TypeTemplate }, "a template needs imageRef"),
		Entry("folder with image", func(p *edgev1alpha1.ProvisionTemplate) { p.Spec.ImageRef = "nginx@1#linux" }, "a folder has no imageRef or defaults"),
		Entry("template with bad image", func(p *edgev1alpha1.ProvisionTemplate) {
			p.Spec.Type, p.Spec.ImageRef = edgev1alpha1.TypeTemplate, "nginx:1"
		}, "must have the form name@tag#os"),
		Entry("name with a slash", func(p *edgev1alpha1.ProvisionTemplate) { p.Spec.Name = "a/b" }, "must be a single path segment"),
		Entry("name ..", func(p *edgev1alpha1.ProvisionTemplate) { p.Spec.Name = ".." }, "must be a single path segment"),
		Entry("unknown type", func(p *edgev1alpha1.ProvisionTemplate) { p.Spec.Type = "file" }, `Unsupported value: "file"`),
		Entry("bad parent path", func(p *edgev1alpha1.ProvisionTemplate) { p.Spec.Path = "/plant/../x" }, "must not contain . or .. segments"),
	)

	It("refuses to move or rename an entry", func() {
		f := folder("fixed", "/plant")
		Expect(k8sClient.Create(ctx, f)).To(Succeed())
		moved := f.DeepCopy()
		moved.Spec.Path = "/elsewhere"
		expectInvalid(k8sClient.Update(ctx, moved), "path is immutable")
		renamed := f.DeepCopy()
		renamed.Spec.Name = "other"
		expectInvalid(k8sClient.Update(ctx, renamed), "name is immutable")
		retyped := f.DeepCopy()
		retyped.Spec.Type, retyped.Spec.ImageRef = edgev1alpha1.TypeTemplate, "nginx@1#linux"
		expectInvalid(k8sClient.Update(ctx, retyped), "type is immutable")
	})
})
