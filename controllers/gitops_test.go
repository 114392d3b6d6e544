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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// kstatusOf computes what kstatus, the library Flux and kubectl-style
// tools use, says of an object as the API server has it now.
func kstatusOf(obj client.Object) status.Status {
	GinkgoHelper()
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	res, err := status.Compute(&unstructured.Unstructured{Object: u})
	Expect(err).NotTo(HaveOccurred())
	return res.Status
}

var _ = Describe("What a GitOps tool sees", func() {
	It("an EdgeService is InProgress while it rolls out, Failed when an instance fails, Current when all run", func() {
		ns := newNamespace()
		node := "gitops-" + ns
		createNode(node, "linux", nil)
		keepAlive(node)
		report(node, "linux")
		svc := newStatic(ns, "web", node)
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		inst := waitInstances(svc, 1)[0]

		By("rolling out: InProgress, not Ready")
		Eventually(func() status.Status { return kstatusOf(svc) }).Should(Equal(status.InProgressStatus))
		Expect(serviceCondition(svc, "Ready").Status).To(Equal(metav1.ConditionFalse))
		Expect(argoHealth("EdgeService", svc)).To(Equal("Progressing"))

		By("every instance running: Current and Ready, and kubectl wait returns")
		report(node, "linux", running(inst, 1))
		Eventually(func() status.Status { return kstatusOf(svc) }).Should(Equal(status.CurrentStatus))
		Expect(serviceCondition(svc, "Ready").Status).To(Equal(metav1.ConditionTrue))
		Expect(kubectlWait("edgeservice/web", ns)).To(Succeed())
		Expect(argoHealth("EdgeService", svc)).To(Equal("Healthy"))
		Expect(argoHealth("EdgeNode", getNode(node))).To(Equal("Healthy"))

		By("an image change: InProgress again until the new revision runs")
		svc = getService(ns, "web")
		base := client.MergeFrom(svc.DeepCopy()) // the controller writes its status meanwhile
		svc.Spec.Image.Ref = "app@2.0#linux"
		Expect(k8sClient.Patch(ctx, svc, base)).To(Succeed())
		Eventually(func() status.Status { return kstatusOf(svc) }).Should(Equal(status.InProgressStatus))

		By("the new revision fails: Failed, Ready False with the reason")
		failed := running(inst, 2)
		failed.State, failed.FailedMessage = edgev1alpha1.ContainerExited, "image app:2.0 is not present"
		report(node, "linux", failed)
		Eventually(func() status.Status { return kstatusOf(svc) }).Should(Equal(status.FailedStatus))
		Expect(serviceCondition(svc, "Ready").Reason).To(Equal(edgev1alpha1.ReasonDeployFailed))
		Expect(serviceCondition(svc, "Ready").Message).To(ContainSubstring("is not present"))
		Expect(argoHealth("EdgeService", svc)).To(Equal("Degraded"))

		By("recovery: Current and Ready")
		report(node, "linux", running(inst, 2))
		Eventually(func() status.Status { return kstatusOf(svc) }).Should(Equal(status.CurrentStatus))
		Expect(serviceCondition(svc, "Ready").Status).To(Equal(metav1.ConditionTrue))
		Expect(argoHealth("EdgeService", svc)).To(Equal("Healthy"))

		By("the record of the revision has no status to wait for: it is Current as written")
		rec := &edgev1alpha1.DeployRecord{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-2"}}
		Expect(getRecord(rec).Generation).To(BeNumerically(">", 0))
		Expect(kstatusOf(rec)).To(Equal(status.CurrentStatus))
		Expect(argoHealth("DeployRecord", rec)).To(Equal("Healthy"))
	})

	It("a ProvisionTemplate is InProgress until its folder exists, then Current and Ready", func() {
		ns := newNamespace()
		tmpl := &edgev1alpha1.ProvisionTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plant-gw"},
			Spec:       edgev1alpha1.ProvisionTemplateSpec{Type: edgev1alpha1.TypeTemplate, Name: "gw", Path: "/plant", ImageRef: "gw@1#linux"},
		}
		Expect(k8sClient.Create(ctx, tmpl)).To(Succeed())
		Eventually(func() status.Status { return kstatusOf(tmpl) }).Should(Equal(status.InProgressStatus))
		Expect(argoHealth("ProvisionTemplate", tmpl)).To(Equal("Progressing"))
		Expect(k8sClient.Create(ctx, &edgev1alpha1.ProvisionTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plant"},
			Spec:       edgev1alpha1.ProvisionTemplateSpec{Type: edgev1alpha1.TypeFolder, Name: "plant", Path: "/"},
		})).To(Succeed())
		Eventually(func() status.Status { return kstatusOf(tmpl) }).Should(Equal(status.CurrentStatus))
		Expect(kubectlWait("provisiontemplate/plant-gw", ns)).To(Succeed())
		Expect(argoHealth("ProvisionTemplate", tmpl)).To(Equal("Healthy"))
	})
})

// argoScripts are the Argo CD health checks of docs/gitops.md, by kind.
var argoScripts = func() map[string]string {
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "gitops.md"))
	if err != nil {
		panic(err)
	}
	_, block, _ := strings.Cut(string(doc), "kind: ConfigMap")
	block, _, _ = strings.Cut(block, "```")
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte("kind: ConfigMap"+block), &cm); err != nil {
		panic(err)
	}
	out := map[string]string{}
	for k, v := range cm.Data {
		if kind, ok := strings.CutPrefix(k, "resource.customizations.health.edge.edgeplane.io_"); ok {
			out[kind] = v
		}
	}
	return out
}()

// argoHealth runs the Argo CD health check of obj's kind, with a Lua
// interpreter, against obj as the API server has it now, as Argo CD does.
func argoHealth(kind string, obj client.Object) string {
	GinkgoHelper()
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	script, ok := argoScripts[kind]
	Expect(ok).To(BeTrue(), "docs/gitops.md has no health check for %s", kind)
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, u))
	Expect(L.DoString("function health()\n" + script + "\nend")).To(Succeed())
	Expect(L.CallByParam(lua.P{Fn: L.GetGlobal("health"), NRet: 1, Protect: true})).To(Succeed())
	hs, ok := L.Get(-1).(*lua.LTable)
	Expect(ok).To(BeTrue(), "the %s health check returns a table", kind)
	return hs.RawGetString("status").String()
}

// toLua converts JSON-like Go values to Lua values, as Argo CD passes obj.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range v {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	default:
		Fail(fmt.Sprintf("no Lua value for %T", v))
		return lua.LNil
	}
}

// serviceCondition is one condition of a service as the API server has it now.
func serviceCondition(svc *edgev1alpha1.EdgeService, typ string) metav1.Condition {
	GinkgoHelper()
	for _, c := range getService(svc.Namespace, svc.Name).Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	Fail("no condition " + typ)
	return metav1.Condition{}
}

func getRecord(rec *edgev1alpha1.DeployRecord) *edgev1alpha1.DeployRecord {
	GinkgoHelper()
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(rec), rec)).To(Succeed())
	return rec
}

// kubectlWait runs kubectl wait --for=condition=Ready on an object, as a
// user or a pipeline would.
func kubectlWait(object, ns string) error {
	GinkgoHelper()
	kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(testenv.WriteKubeconfig(testEnv, kubeconfig)).To(Succeed())
	out, err := exec.Command(filepath.Join(testEnv.BinaryAssetsDirectory, "kubectl"), "--kubeconfig", kubeconfig,
		"wait", "--for=condition=Ready", "--timeout="+(10*time.Second).String(), "-n", ns, object).CombinedOutput()
	if err != nil {
		GinkgoWriter.Printf("kubectl wait: %s\n", out)
	}
	return err
}
