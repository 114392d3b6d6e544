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
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
	"github.com/edgeplane/edgeplane/test/e2e"
)

var (
	ctx       context.Context
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	base      string
	sys       *e2e.System
	// stopFailing kills the agent of the node the suite makes fail.
	stopFailing context.CancelFunc
)

const failingNode = "edge-linux-05"

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	testenv.RunSpecs(t, "End-to-end suite")
}

var _ = BeforeSuite(func() {
	o := controllers.DefaultOptions()
	o.NodeGracePeriod, o.RescheduleGrace, o.DeletionTimeout = 2*time.Second, 2*time.Second, 10*time.Second
	ctx, sys = e2e.StartSuite(o)
	testEnv, cfg, k8sClient, base = sys.Env, sys.Cfg, sys.Client, sys.Base

	// Two agents: one plays four nodes, the other the node that will fail.
	opts := agent.DefaultOptions()
	opts.Log = logf.Log.WithName("agent")
	opts.RenewInterval, opts.MetricsInterval, opts.Tick = 500*time.Millisecond, time.Second, 100*time.Millisecond
	so := sim.DefaultOptions()
	so.StartDelay, so.FailImages = 500*time.Millisecond, mustRegexp("^broken")
	opts.NewRuntime = sim.Runtimes(so)
	site := map[string]string{"site": "plant-a"}
	opts.Nodes = []agent.Node{
		{Name: "edge-linux-01", Type: "linux", Arch: "amd64", Address: "10.0.0.1:7200", Labels: site},
		{Name: "edge-sylixos-02", Type: "sylixos", Arch: "arm64", Address: "10.0.0.2:7200", Labels: site},
		{Name: "edge-linux-03", Type: "linux", Arch: "arm64", Address: "10.0.0.3:7200", Labels: site},
		{Name: "edge-sylixos-04", Type: "sylixos", Arch: "arm64", Address: "10.0.0.4:7200", Labels: site},
	}
	go func() { _ = agent.Run(ctx, cfg, opts) }()
	failing := opts
	failing.Nodes = []agent.Node{{Name: failingNode, Type: "linux", Arch: "amd64", Address: "10.0.0.5:7200", Labels: site}}
	var fctx context.Context
	fctx, stopFailing = context.WithCancel(ctx)
	go func() { _ = agent.Run(fctx, cfg, failing) }()
})

// call sends a request to the facade and decodes the envelope's data.
func call(method, path string, body any, data any) int {
	GinkgoHelper()
	return sys.Call(ctx, method, path, body, data)
}

type page = e2e.Page

func list(path string, kv ...string) page {
	GinkgoHelper()
	return sys.List(ctx, path, kv...)
}

// byName indexes the items of a page by a field.
func byName(p page, field string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, item := range p.List {
		out[item[field].(string)] = item
	}
	return out
}

func serviceID(name string) string {
	GinkgoHelper()
	return sys.ServiceID(ctx, name)
}

// containersOf lists a service's containers through the facade.
func containersOf(service string) []map[string]any {
	GinkgoHelper()
	return sys.ContainersOf(ctx, service)
}

func statuses(items []map[string]any) []any {
	out := make([]any, 0, len(items))
	for _, c := range items {
		out = append(out, c["deployStatus"])
	}
	return out
}

func nodesOf(items []map[string]any) []string {
	out := make([]string, 0, len(items))
	for _, c := range items {
		out = append(out, c["nodeName"].(string))
	}
	return out
}

var _ = Describe("A legacy client", Ordered, func() {
	It("sees the simulated nodes register and come online", func() {
		Eventually(func() map[string]map[string]any { return byName(list("/api/v1/node", "pageSize", "-1"), "name") }).Should(And(
			HaveKeyWithValue("edge-linux-01", HaveKeyWithValue("status", "online")),
			HaveKeyWithValue("edge-sylixos-02", HaveKeyWithValue("status", "online")),
			HaveKeyWithValue("edge-linux-03", HaveKeyWithValue("status", "online")),
			HaveKeyWithValue("edge-sylixos-04", HaveKeyWithValue("status", "online")),
			HaveKeyWithValue(failingNode, HaveKeyWithValue("status", "online"))))
		nodes := byName(list("/api/v1/node", "pageSize", "-1", "basicInfo", "true"), "name")
		Expect(nodes["edge-sylixos-02"]).To(Equal(map[string]any{"id": nodes["edge-sylixos-02"]["id"], "name": "edge-sylixos-02", "type": "sylixos", "arch": "arm64"}))
		full := byName(list("/api/v1/node", "name", "edge-linux-01"), "name")["edge-linux-01"]
		Expect(full["upTime"]).To(BeNumerically(">", 0))
		Eventually(func() any {
			return byName(list("/api/v1/node", "name", "edge-linux-01"), "name")["edge-linux-01"]["containerTotal"]
		}).Should(BeNumerically("==", 1), "the runtime's own container")
	})

	It("deploys a static and a dynamic service and follows them from deploying to success", func() {
		Expect(k8sClient.Create(ctx, &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gateway"},
			Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: "/plant-a/line-1", Image: edgev1alpha1.ImageSpec{Ref: "gateway@1.0#linux"}, Cmd: []string{"/bin/gateway"}}, Nodes: []string{"edge-linux-01", "edge-linux-03"}},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "telemetry"},
			Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: "/plant-a", Image: edgev1alpha1.ImageSpec{Ref: "telemetry@2#linux"}, Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To[int32](3), NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"site": "plant-a"}}}},
		})).To(Succeed())

		Eventually(func() []any { return statuses(containersOf("gateway")) }).Should(Equal([]any{"success", "success"}))
		Eventually(func() []any { return statuses(containersOf("telemetry")) }).Should(Equal([]any{"success", "success", "success"}))
		Expect(nodesOf(containersOf("telemetry"))).To(ConsistOf("edge-linux-01", "edge-linux-03", failingNode), "spread over the linux nodes")

		c := containersOf("gateway")[0]
		var detail map[string]any
		Expect(call(http.MethodGet, "/api/v1/container/"+c["taskId"].(string), nil, &detail)).To(Equal(http.StatusOK))
		Expect(detail["status"]).To(Equal("running"))
		Expect(detail["imageName"]).To(Equal("gateway"))
		Eventually(func() any {
			call(http.MethodGet, "/api/v1/container/"+c["taskId"].(string), nil, &detail)
			return detail["memoryUsage"]
		}).Should(BeNumerically(">", 0), "the runtime reports figures")

		By("listing containers by node")
		nodeID := byName(list("/api/v1/node", "name", "edge-linux-01"), "name")["edge-linux-01"]["id"].(string)
		Expect(nodesOf(list("/api/v1/container/node", "nodeIds[]", nodeID, "pageSize", "-1").List)).To(Equal([]string{"edge-linux-01", "edge-linux-01"}))
	})

	It("reports a container that fails to start", func() {
		Expect(k8sClient.Create(ctx, &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "broken"},
			Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: "/lab", Image: edgev1alpha1.ImageSpec{Ref: "broken@1#sylixos"}}, Nodes: []string{"edge-sylixos-02"}},
		})).To(Succeed())
		Eventually(func() []any { return statuses(containersOf("broken")) }).Should(Equal([]any{"failure"}))
		Expect(containersOf("broken")[0]["failedMessage"]).To(ContainSubstring("broken@1#sylixos"))
	})

	It("records an image update as a new record, keeping the old one", func() {
		s := &edgev1alpha1.EdgeService{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "gateway"}, s)).To(Succeed())
		patch := client.MergeFrom(s.DeepCopy())
		s.Spec.Image.Ref = "gateway@1.1#linux"
		Expect(k8sClient.Patch(ctx, s, patch)).To(Succeed())
		Eventually(func() int { return list("/api/v1/service/record", "id", serviceID("gateway")).Total }).Should(Equal(2))
		recs := list("/api/v1/service/record", "id", serviceID("gateway")).List
		Expect([]any{recs[0]["image"], recs[1]["image"]}).To(Equal([]any{"gateway@1.1#linux", "gateway@1.0#linux"}))
		// Wait for the new revision itself: until the controller has moved
		// the instances on, the old ones still show success.
		Eventually(func(g Gomega) {
			cs := containersOf("gateway")
			g.Expect(statuses(cs)).To(Equal([]any{"success", "success"}))
			for _, c := range cs {
				g.Expect(c["imageVersion"]).To(Equal("1.1"))
				g.Expect(c["deployNum"]).To(BeNumerically("==", 2))
			}
		}).Should(Succeed())
	})

	It("scales a dynamic service", func() {
		s := &edgev1alpha1.EdgeService{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "telemetry"}, s)).To(Succeed())
		patch := client.MergeFrom(s.DeepCopy())
		s.Spec.Factor = ptr.To[int32](4)
		Expect(k8sClient.Patch(ctx, s, patch)).To(Succeed())
		Eventually(func() []any { return statuses(containersOf("telemetry")) }).Should(Equal([]any{"success", "success", "success", "success"}))
		Expect(list("/api/v1/service/record", "id", serviceID("telemetry")).Total).To(Equal(2), "a scale is a change of configuration")
	})

	It("sees a failed node go offline and its dynamic instances move", func() {
		stopFailing()
		Eventually(func() any { return byName(list("/api/v1/node", "name", failingNode), "name")[failingNode]["status"] }).Should(Equal("offline"))
		Expect(byName(list("/api/v1/node", "name", failingNode), "name")[failingNode]["upTime"]).To(BeNumerically("==", 0))
		Eventually(func() []string { return nodesOf(containersOf("telemetry")) }).ShouldNot(ContainElement(failingNode))
		Eventually(func() []any { return statuses(containersOf("telemetry")) }).Should(Equal([]any{"success", "success", "success", "success"}))
		Expect(nodesOf(containersOf("telemetry"))).To(ConsistOf("edge-linux-01", "edge-linux-01", "edge-linux-03", "edge-linux-03"))
	})

	It("creates folders and batch templates", func() {
		var folder map[string]any
		Expect(call(http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"name": "images", "path": "/plant-a/line-1"}, &folder)).To(Equal(http.StatusOK))
		Expect(folder["path"]).To(Equal("/plant-a/line-1/images"))
		var rows struct {
			ProvisionTmplList []map[string]string `json:"provisionTmplList"`
		}
		Expect(call(http.MethodPost, "/api/v1/provision-template/path-label/service/batch",
			map[string]any{"imageRefs": []string{"gateway@1.1#linux", "plc/runtime@3#sylixos"}, "path": "/plant-a/line-1/images"}, &rows)).To(Equal(http.StatusOK))
		Expect(rows.ProvisionTmplList).To(HaveLen(2))
		Expect(rows.ProvisionTmplList[1]["name"]).To(Equal("plc-runtime"))
	})

	It("force-deletes the services under a folder, and only those", func() {
		var items []map[string]any
		Expect(call(http.MethodDelete, "/api/v1/service/path", map[string]string{"path": "/plant-a"}, &items)).To(Equal(http.StatusOK))
		Expect(items).To(HaveLen(2))
		for _, name := range []string{"gateway", "telemetry"} {
			Eventually(func() error {
				return k8sClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &edgev1alpha1.EdgeService{})
			}).Should(MatchError(ContainSubstring("not found")))
		}
		Expect(containersOf("broken")).To(HaveLen(1), "/lab is not under /plant-a")
		By("the agents stop the deleted services' containers")
		Eventually(func() any {
			return byName(list("/api/v1/node", "name", "edge-linux-01"), "name")["edge-linux-01"]["containerManagedTotal"]
		}).Should(BeNumerically("==", 0))
	})
})

func mustRegexp(s string) *regexp.Regexp { return regexp.MustCompile(s) }
