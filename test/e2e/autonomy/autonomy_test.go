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

package autonomy_test

import (
	"context"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// device is one edge device: its agent plays the given nodes, each joined
// to the edge hub with an identity of its own, reaching the hub through a
// proxy the test can cut, with engines and a state directory that outlive
// the agent.
type device struct {
	nodes    []agent.Node
	engines  map[string]*engine
	stateDir string
	cfgs     map[string]*rest.Config
	proxy    *testenv.Proxy
	stop     func()
	done     chan struct{}
}

func newDevice(names ...string) *device {
	GinkgoHelper()
	d := &device{engines: map[string]*engine{}, stateDir: GinkgoT().TempDir(), cfgs: map[string]*rest.Config{}}
	u, err := url.Parse(sys.HubURL)
	Expect(err).NotTo(HaveOccurred())
	d.proxy, err = testenv.StartProxy(u.Host)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(d.proxy.Close)
	for i, name := range names {
		n := agent.Node{Name: name, Type: "linux", Arch: "amd64", Address: "127.0.0.1:7200", Labels: map[string]string{"device": "d1"}}
		d.nodes = append(d.nodes, n)
		d.engines[name] = &engine{Runtime: sim.New(n, d.simOptions(), i)}
		id := sys.Join(ctx, name, n.Labels, filepath.Join(d.stateDir, name, "hub"))
		cfg, err := id.RESTConfig()
		Expect(err).NotTo(HaveOccurred())
		cfg.Host = "https://" + d.proxy.Addr() // the hub's certificate names 127.0.0.1
		d.cfgs[name] = cfg
	}
	return d
}

func (d *device) simOptions() sim.Options {
	so := sim.DefaultOptions()
	so.StartDelay, so.SystemContainers = 300*time.Millisecond, 0
	return so
}

func (d *device) options() agent.Options {
	o := agent.DefaultOptions()
	o.Log, o.Clock = logf.Log.WithName("agent"), clock.RealClock{}
	o.RenewInterval, o.Tick, o.MetricsInterval, o.RuntimeProbeInterval = 500*time.Millisecond, 100*time.Millisecond, time.Second, 500*time.Millisecond
	o.StateDir = d.stateDir
	o.Nodes = d.nodes
	o.NewRuntime = func(n agent.Node, _ int) (agent.Runtime, error) { return d.engines[n.Name], nil }
	o.NodeConfig = func(n agent.Node) (*rest.Config, error) { return d.cfgs[n.Name], nil }
	return o
}

// start runs the agent until stopAgent.
func (d *device) start() {
	actx, stop := context.WithCancel(ctx)
	d.done = make(chan struct{})
	done := d.done
	go func() {
		defer close(done)
		defer GinkgoRecover()
		Expect(agent.Run(actx, nil, d.options())).To(Succeed())
	}()
	d.stop = func() { stop(); <-done }
}

func (d *device) stopAgent() { d.stop() }

// running says the agent has not returned.
func (d *device) running() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

func service(name, ref string, nodes ...string) *edgev1alpha1.EdgeService {
	return &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Image: edgev1alpha1.ImageSpec{Ref: edgev1alpha1.ImageRef(ref)}}, Nodes: nodes},
	}
}

func dynamic(name, ref string, factor int32) *edgev1alpha1.EdgeService {
	s := service(name, ref)
	s.Spec.Policy, s.Spec.Factor = edgev1alpha1.PolicyDynamic, ptr.To(factor)
	s.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"device": "d1"}}
	return s
}

func get(name string) *edgev1alpha1.EdgeService {
	GinkgoHelper()
	s := &edgev1alpha1.EdgeService{}
	Expect(sys.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, s)).To(Succeed())
	return s
}

// instances are a service's instances as the nodes' assignments have
// them, with the deployment status each node's report gives them.
func instances(name string) []edgev1alpha1.ServiceInstance {
	GinkgoHelper()
	out, err := testenv.Instances(ctx, sys.Client, "default", name)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// successAt says every instance of a service succeeded at revision rev.
func successAt(name string, rev int64) func() bool {
	return func() bool {
		insts, err := testenv.Instances(ctx, sys.Client, "default", name)
		if err != nil || len(insts) == 0 {
			return false
		}
		for _, inst := range insts {
			if inst.Revision != rev || inst.DeployStatus != edgev1alpha1.DeploySuccess {
				return false
			}
		}
		return true
	}
}

// edgeNode is a node as the API server has it; empty until it exists.
func edgeNode(name string) *edgev1alpha1.EdgeNode {
	n := &edgev1alpha1.EdgeNode{}
	_ = sys.Client.Get(ctx, client.ObjectKey{Name: name}, n)
	return n
}

func records(service string) []string {
	GinkgoHelper()
	list := &edgev1alpha1.DeployRecordList{}
	Expect(sys.Client.List(ctx, list, client.InNamespace("default"))).To(Succeed())
	var out []string
	for _, r := range list.Items {
		if r.Spec.ServiceName == service {
			out = append(out, r.Name)
		}
	}
	return out
}

var _ = Describe("An edge device", Ordered, func() {
	var d *device

	BeforeAll(func() {
		d = newDevice("edge-auto-01", "edge-auto-02")
		d.start()
		DeferCleanup(func() { d.stopAgent() })
		Eventually(func() edgev1alpha1.NodeState { return edgeNode("edge-auto-01").Status.Status }).Should(Equal(edgev1alpha1.NodeOnline))
		Eventually(func() edgev1alpha1.NodeState { return edgeNode("edge-auto-02").Status.Status }).Should(Equal(edgev1alpha1.NodeOnline))
	})

	It("reports its engine reachable", func() {
		Eventually(func() *metav1.Condition {
			return meta.FindStatusCondition(edgeNode("edge-auto-01").Status.Conditions, edgev1alpha1.ConditionRuntimeReady)
		}).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", edgev1alpha1.ReasonRuntimeReachable)))
		Expect(meta.IsStatusConditionTrue(edgeNode("edge-auto-01").Status.Conditions, edgev1alpha1.ConditionReady)).To(BeTrue())
	})

	It("starts from its state file with its link cut, keeps its containers, and applies the cluster's changes when the link returns", func() {
		Expect(sys.Client.Create(ctx, service("keeper", "keeper@1#linux", "edge-auto-01"))).To(Succeed())
		Expect(sys.Client.Create(ctx, service("leaver", "leaver@1#linux", "edge-auto-01"))).To(Succeed())
		Eventually(successAt("keeper", 1)).Should(BeTrue())
		Eventually(successAt("leaver", 1)).Should(BeTrue())
		keeperTask, leaverTask := instances("keeper")[0].TaskID, instances("leaver")[0].TaskID
		eng := d.engines["edge-auto-01"]
		leaverID := eng.byTask()[leaverTask][0].ID
		Expect(filepath.Join(d.stateDir, "edge-auto-01.json")).To(BeARegularFile())

		By("the device reboots during a WAN outage: agent gone, link cut, one container lost")
		d.stopAgent()
		d.proxy.Cut()
		Expect(eng.Runtime.Remove(ctx, eng.byTask()[keeperTask][0].ID)).To(Succeed())

		By("meanwhile the cluster changes: keeper's image is updated, leaver is deleted")
		keeper := get("keeper")
		base := client.MergeFrom(keeper.DeepCopy()) // the controller writes its status meanwhile
		keeper.Spec.Image.Ref = "keeper@2#linux"
		Expect(sys.Client.Patch(ctx, keeper, base)).To(Succeed())
		Expect(sys.Client.Delete(ctx, get("leaver"))).To(Succeed())

		By("the agent starts with no API server to reach, from its state file")
		d.start()
		Eventually(func() int { return len(eng.byTask()[keeperTask]) }).Should(Equal(1), "the lost container is created again from the state file")
		Expect(eng.byTask()[keeperTask][0].Revision()).To(Equal(int64(1)), "the state file's revision: the agent cannot know of the update yet")
		Consistently(func() []agent.Container { return eng.byTask()[leaverTask] }, 2*time.Second).Should(
			ConsistOf(HaveField("ID", leaverID)), "a container is never removed because its service cannot be seen")
		Expect(len(eng.byTask()[keeperTask])).To(Equal(1))
		Expect(d.running()).To(BeTrue(), "the agent runs on without its API server")

		By("the link returns")
		d.proxy.Restore()
		Eventually(successAt("keeper", 2)).Should(BeTrue())
		Eventually(func() []agent.Container { return eng.byTask()[keeperTask] }).Should(ConsistOf(HaveField("Labels", HaveKeyWithValue(agent.LabelRevision, "2"))))
		Eventually(func() []agent.Container { return eng.byTask()[leaverTask] }).Should(BeEmpty(), "removed once the API server says its instance is gone")
		Eventually(func() bool {
			return apierrors.IsNotFound(sys.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "leaver"}, &edgev1alpha1.EdgeService{}))
		}).Should(BeTrue(), "leaver's finalizer let go once its container was reported gone")
		Expect(records("keeper")).To(ConsistOf("keeper-1", "keeper-2"), "one record per change, exactly once")
		Eventually(func() edgev1alpha1.NodeState { return edgeNode("edge-auto-01").Status.Status }).Should(Equal(edgev1alpha1.NodeOnline))
	})

	It("sets a corrupt state file aside, trusts none of it, and still removes nothing it cannot see", func() {
		d.stopAgent()
		d.proxy.Cut()
		eng := d.engines["edge-auto-01"]
		kept := eng.byTask()[instances("keeper")[0].TaskID]
		Expect(kept).To(HaveLen(1))
		file := filepath.Join(d.stateDir, "edge-auto-01.json")
		Expect(os.WriteFile(file, []byte(`{"kind":"EdgeAgentState","version":1,"node":"edge-auto-01","checksum":"sha256:00","services":[]}`), 0o600)).To(Succeed())
		lists := eng.lists.Load()
		d.start()
		Eventually(func() ([]string, error) { return filepath.Glob(file + ".bad-*") }).Should(HaveLen(1))
		Eventually(eng.lists.Load).Should(BeNumerically(">", lists), "the agent acts on what the engine holds")
		Consistently(func() []agent.Container { return eng.byTask()[instances("keeper")[0].TaskID] }, 2*time.Second).Should(
			ConsistOf(HaveField("ID", kept[0].ID)), "no desired state at all, and still the container stays")
		d.proxy.Restore()
		Eventually(successAt("keeper", 2)).Should(BeTrue())
		Expect(eng.byTask()[instances("keeper")[0].TaskID]).To(ConsistOf(HaveField("ID", kept[0].ID)), "adopted, not replaced")
		Eventually(func() ([]byte, error) { return os.ReadFile(file) }).Should(ContainSubstring(`"keeper"`), "written anew from the API server")
	})

	It("reports an engine that does not answer, its containers unknown, moves dynamic instances off it, and recovers them with the same ids", func() {
		Expect(sys.Client.Create(ctx, service("pinned", "pinned@1#linux", "edge-auto-02"))).To(Succeed())
		Expect(sys.Client.Create(ctx, service("lost", "lost@1#linux", "edge-auto-02"))).To(Succeed())
		Expect(sys.Client.Create(ctx, dynamic("roamer", "roamer@1#linux", 1))).To(Succeed())
		Eventually(successAt("pinned", 1)).Should(BeTrue())
		Eventually(successAt("lost", 1)).Should(BeTrue())
		Eventually(successAt("roamer", 1)).Should(BeTrue())
		// Take down the engine of the node roamer runs on; pinned and lost
		// are on edge-auto-02: put roamer there too if it is not.
		roamerNode := instances("roamer")[0].NodeName
		down := "edge-auto-02"
		other := "edge-auto-01"
		if roamerNode != down {
			down, other = roamerNode, "edge-auto-02"
		}
		eng := d.engines[down]
		pinnedTask, lostTask := instances("pinned")[0].TaskID, instances("lost")[0].TaskID
		pinnedID := d.engines["edge-auto-02"].byTask()[pinnedTask][0].ID

		By("the engine stops answering")
		eng.down.Store(true)
		Eventually(func() *metav1.Condition {
			return meta.FindStatusCondition(edgeNode(down).Status.Conditions, edgev1alpha1.ConditionRuntimeReady)
		}).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionFalse), HaveField("Reason", edgev1alpha1.ReasonRuntimeUnreachable),
			HaveField("Message", ContainSubstring("connection refused"))))
		Eventually(func() *metav1.Condition {
			return meta.FindStatusCondition(edgeNode(down).Status.Conditions, edgev1alpha1.ConditionReady)
		}).Should(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", edgev1alpha1.ReasonRuntimeUnreachable)))
		Expect(edgeNode(down).Status.Status).To(Equal(edgev1alpha1.NodeOnline), "the agent is alive: the node stays online")
		stdout, stderr, err := sys.Env.ControlPlane.KubeCtl().Run("get", "en", down)
		Expect(err).NotTo(HaveOccurred())
		out, _ := io.ReadAll(io.MultiReader(stdout, stderr))
		Expect(strings.Fields(strings.Split(string(out), "\n")[1])).To(HaveExactElements(down, "online", "linux", "amd64", "RuntimeUnreachable", Not(BeEmpty()), Not(BeEmpty()), Not(BeEmpty())),
			"kubectl get en shows the runtime:\n%s", out)
		nodes := sys.List(ctx, "/api/v1/node", "pageSize", "-1", "name", down).List
		Expect(nodes).To(ConsistOf(HaveKeyWithValue("status", "online")))
		if down == "edge-auto-02" {
			Eventually(func() []map[string]any { return sys.ContainersOf(ctx, "pinned") }).Should(ConsistOf(
				And(HaveKeyWithValue("status", BeNil()), HaveKeyWithValue("id", pinnedID))), "the contract's unknown state, not the last known one")
		}

		By("dynamic placement treats the node like an offline one")
		// Between the two nodes' writes, one may show neither instance.
		Eventually(func() []edgev1alpha1.ServiceInstance { return instances("roamer") }).Should(
			ConsistOf(HaveField("NodeName", other)), "moved after the reschedule grace period")
		Eventually(successAt("roamer", 1)).Should(BeTrue())
		Expect(sys.Client.Create(ctx, dynamic("newcomer", "newcomer@1#linux", 2))).To(Succeed())
		Eventually(func() int { return len(instances("newcomer")) }).Should(Equal(2))
		Expect(instances("newcomer")).To(HaveEach(HaveField("NodeName", other)), "no new instance goes to a node whose engine does not answer")

		By("the engine loses a container while it is down")
		Expect(d.engines["edge-auto-02"].Runtime.Remove(ctx, d.engines["edge-auto-02"].byTask()[lostTask][0].ID)).To(Succeed())
		calls := eng.calls.Load()
		Consistently(func() int64 { return eng.calls.Load() - calls }, 2*time.Second).Should(BeNumerically("<=", 0), "no call but the probe while the engine is down")

		By("the engine answers again")
		eng.down.Store(false)
		Eventually(func() *metav1.Condition {
			return meta.FindStatusCondition(edgeNode(down).Status.Conditions, edgev1alpha1.ConditionReady)
		}).Should(HaveField("Status", metav1.ConditionTrue))
		Eventually(func() []map[string]any { return sys.ContainersOf(ctx, "pinned") }).Should(ConsistOf(
			And(HaveKeyWithValue("status", "running"), HaveKeyWithValue("id", pinnedID))), "the same container, its real state again")
		Eventually(func() int { return len(d.engines["edge-auto-02"].byTask()[lostTask]) }).Should(Equal(1), "the lost container is created again")
		Consistently(func() int { return len(d.engines["edge-auto-02"].byTask()[lostTask]) }, time.Second).Should(Equal(1), "exactly once")
		Eventually(successAt("lost", 1)).Should(BeTrue())
	})
})
