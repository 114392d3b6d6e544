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
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/names"
)

func newNamespace() string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "svc-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func condition(svc *edgev1alpha1.EdgeService, typ string) func() *metav1.Condition {
	return func() *metav1.Condition {
		return meta.FindStatusCondition(getService(svc.Namespace, svc.Name).Status.Conditions, typ)
	}
}

// update changes a service's spec with a fresh read, retrying on conflict.
func update(svc *edgev1alpha1.EdgeService, change func(*edgev1alpha1.EdgeService)) {
	GinkgoHelper()
	Eventually(func() error {
		s := getService(svc.Namespace, svc.Name)
		change(s)
		return k8sClient.Update(ctx, s)
	}).Should(Succeed())
}

var _ = Describe("EdgeService placement and deployment", func() {
	It("places a static service on each listed node that exists and reports the missing one", func() {
		ns := newNamespace()
		createNode("st-a", "linux", nil)
		createNode("st-b", "linux", nil)
		createNode("st-sylix", "sylixos", nil)
		keepAlive("st-a")
		svc := newStatic(ns, "web", "st-a", "st-b", "st-missing", "st-sylix")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())

		insts := waitInstances(svc, 2)
		Expect([]string{insts[0].NodeName, insts[1].NodeName}).To(ConsistOf("st-a", "st-b"))
		for _, i := range insts {
			Expect(i.TaskID).NotTo(BeEmpty())
			Expect(i.Name).To(HavePrefix("web-"))
			Expect(i.DeployStatus).To(Equal(edgev1alpha1.DeployDeploying))
			Expect(i.DeployNum).To(Equal(int32(1)))
			Expect(i.Revision).To(Equal(int64(1)))
		}
		Eventually(condition(svc, edgev1alpha1.ConditionDegraded)).Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", edgev1alpha1.ReasonPlacementFailed),
			HaveField("Message", ContainSubstring("node st-missing does not exist")),
			HaveField("Message", ContainSubstring("node st-sylix runs sylixos; the image needs linux")),
		))
		s := getService(ns, "web")
		Expect(s.Status.Replicas).To(Equal(int32(4)))
		Expect(s.Status.Revision).To(Equal(int64(1)))
		Expect(s.Status.CurrentRecord).To(Equal("web-1"))
		Expect(s.Status.ObservedGeneration).To(Equal(s.Generation))
		Expect(s.Finalizers).To(ContainElement(edgev1alpha1.FinalizerContainers))
		Expect(s.Status.Containers).To(BeEmpty(), "no node's agent predates assignments")
		Expect(s.Labels).NotTo(HaveKey(names.PlacementLabel("st-a")), "nor watches its services by label")

		By("telling each node its instance in its assignment")
		for _, i := range insts {
			e := assignment(i.NodeName).Spec.Services[edgev1alpha1.AssignmentKey(ns, "web")]
			Expect(e.Instances).To(ConsistOf(HaveField("TaskID", i.TaskID)))
			Expect(e.Spec.Image.Ref).To(BeEquivalentTo("app@1.0#linux"))
			Expect(e.UID).To(BeEquivalentTo(s.UID))
		}

		By("placing the missing node's instance once the node exists, keeping the others' task ids")
		createNode("st-missing", "linux", nil)
		after := waitInstances(svc, 3)
		Expect(after).To(ContainElements(insts[0], insts[1]))

		By("recording the nodes with the revision")
		recs := records(ns, "web")
		Expect(recs).To(HaveLen(1))
		Expect(recs[0].Spec.Nodes).To(HaveLen(4))
		Expect(recs[0].Spec.Nodes[0]).To(HaveField("NodeName", "st-a"))
		Expect(recs[0].Spec.Nodes[0].NodeID).To(Equal(string(getNode("st-a").UID)))
		Expect(recs[0].Spec.Nodes[0].Address).To(Equal("10.1.0.1:7200"))
		Expect(recs[0].Spec.Image.PullPolicy).To(Equal(edgev1alpha1.PullIfNotPresent))
		Expect(recs[0].Labels).To(HaveKeyWithValue(edgev1alpha1.LabelServiceUID, string(s.UID)))
		Expect(recs[0].OwnerReferences).To(ContainElement(HaveField("UID", s.UID)))
	})

	It("follows each instance from deploying to success or failure as agents report", func() {
		ns := newNamespace()
		createNode("dep-a", "linux", nil)
		createNode("dep-b", "linux", nil)
		keepAlive("dep-a")
		keepAlive("dep-b")
		svc := newStatic(ns, "api", "dep-a", "dep-b")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		insts := waitInstances(svc, 2)
		byNode := map[string]edgev1alpha1.ServiceInstance{insts[0].NodeName: insts[0], insts[1].NodeName: insts[1]}
		Eventually(condition(svc, edgev1alpha1.ConditionProgressing)).Should(HaveField("Status", metav1.ConditionTrue))

		report("dep-a", "linux", running(byNode["dep-a"], 1))
		failed := edgev1alpha1.ObservedContainer{Name: byNode["dep-b"].Name, TaskID: byNode["dep-b"].TaskID, Revision: 1, FailedMessage: "image app@1.0#linux not found"}
		report("dep-b", "linux", failed)

		Eventually(func() []edgev1alpha1.ServiceInstance { return instancesOf(ns, "api") }).Should(ContainElements(
			And(HaveField("NodeName", "dep-a"), HaveField("DeployStatus", edgev1alpha1.DeploySuccess)),
			And(HaveField("NodeName", "dep-b"), HaveField("DeployStatus", edgev1alpha1.DeployFailure), HaveField("FailedMessage", "image app@1.0#linux not found")),
		))
		Eventually(condition(svc, edgev1alpha1.ConditionDegraded)).Should(And(
			HaveField("Reason", edgev1alpha1.ReasonDeployFailed), HaveField("Message", ContainSubstring("not found"))))
		Expect(getService(ns, "api").Status.ReadyReplicas).To(Equal(int32(1)))
		Eventually(func() []string { return eventReasons(ns, "api") }).Should(ContainElement("DeployFailed"))

		By("succeeding once the agent runs the container")
		report("dep-b", "linux", running(byNode["dep-b"], 1))
		Eventually(condition(svc, edgev1alpha1.ConditionAvailable)).Should(HaveField("Status", metav1.ConditionTrue))
		Expect(meta.IsStatusConditionFalse(getService(ns, "api").Status.Conditions, edgev1alpha1.ConditionDegraded)).To(BeTrue())
		Expect(meta.IsStatusConditionFalse(getService(ns, "api").Status.Conditions, edgev1alpha1.ConditionProgressing)).To(BeTrue())
		Expect(getService(ns, "api").Status.DeployedRevision).To(Equal(int64(1)))

		By("going back to deploying on a new revision, counting the deployment")
		update(svc, func(s *edgev1alpha1.EdgeService) { s.Spec.Image.Ref = "app@1.1#linux" })
		Eventually(func() []edgev1alpha1.ServiceInstance { return instancesOf(ns, "api") }).Should(HaveEach(And(
			HaveField("Revision", int64(2)), HaveField("DeployNum", int32(2)), HaveField("DeployStatus", edgev1alpha1.DeployDeploying))))
		Expect(instancesOf(ns, "api")).To(ConsistOf(HaveField("TaskID", insts[0].TaskID), HaveField("TaskID", insts[1].TaskID)))
		Expect(getService(ns, "api").Status.DeployedRevision).To(Equal(int64(1)), "revision 1 stays the deployed one until every instance runs 2")
	})

	It("spreads a dynamic service over fitting online nodes and moves instances off a node that stays offline", func() {
		ns := newNamespace()
		sel := map[string]string{"pool": ns}
		stopRenewing := map[string]func(){}
		for _, n := range []string{"dyn-a", "dyn-b", "dyn-c"} {
			createNode(n+"-"+ns, "linux", zoned(ns, sel))
			stopRenewing[n+"-"+ns] = keepAlive(n + "-" + ns)
		}
		createNode("dyn-sylix-"+ns, "sylixos", zoned(ns, sel))
		keepAlive("dyn-sylix-" + ns)
		createNode("dyn-other-"+ns, "linux", zoned(ns, map[string]string{"pool": "other"}))
		keepAlive("dyn-other-" + ns)
		Eventually(nodeState("dyn-c-" + ns)).Should(Equal(edgev1alpha1.NodeOnline))

		svc := newDynamic(ns, "worker", 6, sel)
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		insts := waitInstances(svc, 6)
		perNode := map[string]int{}
		for _, i := range insts {
			perNode[i.NodeName]++
		}
		Expect(perNode).To(Equal(map[string]int{"dyn-a-" + ns: 2, "dyn-b-" + ns: 2, "dyn-c-" + ns: 2}))

		By("keeping the placement stable while nodes stay online")
		Consistently(func() []edgev1alpha1.ServiceInstance { return instancesOf(ns, "worker") }, time.Second).Should(ConsistOf(insts))

		By("scaling down from the busiest nodes and recording the change")
		update(svc, func(s *edgev1alpha1.EdgeService) { s.Spec.Factor = ptr.To[int32](3) })
		smaller := waitInstances(svc, 3)
		perNode = map[string]int{}
		for _, i := range smaller {
			perNode[i.NodeName]++
			Expect(insts).To(ContainElement(HaveField("TaskID", i.TaskID)))
		}
		Expect(perNode).To(HaveLen(3))
		Eventually(func() []edgev1alpha1.DeployRecord { return records(ns, "worker") }).Should(HaveLen(2))
		Expect(records(ns, "worker")[1].Spec.Factor).To(Equal(ptr.To[int32](3)))

		By("moving the instance of a node that stays offline past the grace period")
		victim := smaller[0]
		stopRenewing[victim.NodeName]()
		Expect(k8sClient.Delete(ctx, leaseOf(victim.NodeName))).To(Succeed())
		Eventually(nodeState(victim.NodeName)).Should(Equal(edgev1alpha1.NodeOffline))
		Eventually(func() []edgev1alpha1.ServiceInstance { return instancesOf(ns, "worker") }, 3*opts.RescheduleGrace).
			ShouldNot(ContainElement(HaveField("TaskID", victim.TaskID)))
		moved := waitInstances(svc, 3)
		for _, i := range moved {
			Expect(i.NodeName).NotTo(Equal(victim.NodeName))
			Expect(i.NodeName).NotTo(Equal("dyn-sylix-" + ns))
			Expect(i.NodeName).NotTo(Equal("dyn-other-" + ns))
		}
		Expect(records(ns, "worker")).To(HaveLen(2), "moving instances is not a configuration change")
	})

	It("spreads a burst of new services over the nodes before any agent reports their containers", func() {
		ns := newNamespace()
		sel := map[string]string{"pool": ns}
		var names []string
		for _, n := range []string{"burst-a", "burst-b", "burst-c", "burst-d"} {
			createNode(n+"-"+ns, "linux", zoned(ns, sel))
			keepAlive(n + "-" + ns)
			names = append(names, n+"-"+ns)
		}
		for _, n := range names {
			Eventually(nodeState(n)).Should(Equal(edgev1alpha1.NodeOnline))
		}
		var svcs []*edgev1alpha1.EdgeService
		for i := range 8 {
			svc := newDynamic(ns, fmt.Sprintf("burst-%d", i), 1, sel)
			Expect(k8sClient.Create(ctx, svc)).To(Succeed())
			svcs = append(svcs, svc)
		}
		perNode := map[string]int{}
		for _, svc := range svcs {
			perNode[waitInstances(svc, 1)[0].NodeName]++
		}
		// No agent reports: each node's own count of containers stays 0.
		Expect(perNode).To(Equal(map[string]int{names[0]: 2, names[1]: 2, names[2]: 2, names[3]: 2}))
	})
})

// onlineNodes creates linux nodes in zone ns with labels sel, each holding
// maxInstances, keeps them alive and waits until they are online.
func onlineNodes(ns string, sel map[string]string, maxInstances int32, names ...string) []string {
	GinkgoHelper()
	for _, name := range names {
		node := createNode(name, "linux", zoned(ns, sel))
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.MaxInstances = ptr.To(maxInstances)
		Expect(k8sClient.Patch(ctx, node, patch)).To(Succeed())
		keepAlive(node.Name)
	}
	for _, name := range names {
		Eventually(nodeState(name)).Should(Equal(edgev1alpha1.NodeOnline))
	}
	return names
}

var _ = Describe("EdgeService placement within what nodes hold", func() {
	It("never places more on a node than its maxInstances, says so for a factor above the fleet's, and wedges nothing", func() {
		ns := newNamespace()
		sel := map[string]string{"pool": ns}
		nodes := onlineNodes(ns, sel, 3, "cap-a-"+ns, "cap-b-"+ns)

		big := newDynamic(ns, "everywhere", 10000, sel)
		Expect(k8sClient.Create(ctx, big)).To(Succeed())
		perNode := map[string]int{}
		for _, i := range waitInstances(big, 6) {
			perNode[i.NodeName]++
		}
		Expect(perNode).To(Equal(map[string]int{nodes[0]: 3, nodes[1]: 3}))
		Eventually(condition(big, edgev1alpha1.ConditionDegraded)).Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", edgev1alpha1.ReasonPlacementFailed),
			HaveField("Message", ContainSubstring("is full (2 nodes, maxInstances 6 in all); 6 of 10000 instances placed")),
		))
		Eventually(condition(big, "Stalled")).Should(HaveField("Status", metav1.ConditionTrue))
		Eventually(func() []string { return eventReasons(ns, big.Name) }).Should(ContainElement(edgev1alpha1.ReasonPlacementFailed))
		Consistently(func() int { return len(instancesOf(ns, big.Name)) }, time.Second).Should(Equal(6))

		By("a node given room takes more")
		node := getNode(nodes[0])
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.MaxInstances = ptr.To[int32](5)
		Expect(k8sClient.Patch(ctx, node, patch)).To(Succeed())
		waitInstances(big, 8)

		By("the next service places once the big one is gone")
		small := newDynamic(ns, "small", 2, sel)
		Expect(k8sClient.Create(ctx, small)).To(Succeed())
		Eventually(condition(small, edgev1alpha1.ConditionDegraded)).Should(HaveField("Message", ContainSubstring("0 of 2 instances placed")))
		Expect(k8sClient.Delete(ctx, big)).To(Succeed())
		waitInstances(small, 2)
		Eventually(condition(small, edgev1alpha1.ConditionDegraded)).Should(HaveField("Status", metav1.ConditionFalse))
	})
})

var _ = Describe("A node's assignment that cannot hold another service", func() {
	It("says so on the service that does not fit, and keeps the node's other services going", func() {
		ns := newNamespace()
		sel := map[string]string{"pool": ns}
		node := onlineNodes(ns, sel, 10, "full-"+ns)[0]
		// Two services whose configuration is near the largest the CRD
		// accepts (256 variables of 4 KiB): one fits in the node's
		// assignment, two are more than etcd stores in one object.
		var env []string
		for i := range 230 {
			env = append(env, fmt.Sprintf("V%d=%s", i, strings.Repeat("x", 4000)))
		}
		wide := func(name string) *edgev1alpha1.EdgeService {
			svc := newStatic(ns, name, node)
			svc.Spec.Config = &edgev1alpha1.ServiceConfig{Linux: &edgev1alpha1.LinuxConfig{Env: env}}
			return svc
		}
		first, second := wide("first"), wide("second")
		Expect(k8sClient.Create(ctx, first)).To(Succeed())
		Eventually(func() map[string]edgev1alpha1.AssignedService { return assignment(node).Spec.Services }).Should(HaveKey(edgev1alpha1.AssignmentKey(ns, "first")))

		Expect(k8sClient.Create(ctx, second)).To(Succeed())
		Eventually(condition(second, edgev1alpha1.ConditionDegraded)).Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", edgev1alpha1.ReasonPlacementFailed),
			HaveField("Message", ContainSubstring("the assignment of node "+node+" cannot be written")),
			HaveField("Message", ContainSubstring("too large")),
		))
		Eventually(condition(second, "Stalled")).Should(HaveField("Status", metav1.ConditionTrue))
		Eventually(func() []string { return eventReasons(ns, "second") }).Should(ContainElement(edgev1alpha1.ReasonPlacementFailed))
		Expect(assignment(node).Spec.Services).NotTo(HaveKey(edgev1alpha1.AssignmentKey(ns, "second")))

		By("a small service on the same node is not held up")
		small := newStatic(ns, "small", node)
		Expect(k8sClient.Create(ctx, small)).To(Succeed())
		Eventually(func() map[string]edgev1alpha1.AssignedService { return assignment(node).Spec.Services }).Should(HaveKey(edgev1alpha1.AssignmentKey(ns, "small")))
		Eventually(condition(first, edgev1alpha1.ConditionDegraded)).Should(HaveField("Status", metav1.ConditionFalse))

		By("once the first is gone, the second fits and says so")
		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		report(node, "linux")
		Eventually(func() map[string]edgev1alpha1.AssignedService { return assignment(node).Spec.Services }, time.Minute).Should(HaveKey(edgev1alpha1.AssignmentKey(ns, "second")))
		Eventually(condition(second, edgev1alpha1.ConditionDegraded), time.Minute).Should(HaveField("Status", metav1.ConditionFalse))
	})
})

var _ = Describe("The largest service the CRD accepts", func() {
	It("runs 10,000 instances on five nodes of 2,000, with every object small", func() {
		ns := newNamespace()
		sel := map[string]string{"pool": ns}
		var five []string
		for i := range 5 {
			five = append(five, fmt.Sprintf("huge-%d-%s", i, ns))
		}
		nodes := onlineNodes(ns, sel, 2000, five...)
		huge := newDynamic(ns, "huge", 10000, sel)
		Expect(k8sClient.Create(ctx, huge)).To(Succeed())
		key := edgev1alpha1.AssignmentKey(ns, "huge")

		By("placing 2,000 instances on each node, in its assignment")
		Eventually(func() []int {
			var out []int
			for _, n := range nodes {
				out = append(out, len(assignment(n).Spec.Services[key].Instances))
			}
			return out
		}, time.Minute).Should(Equal([]int{2000, 2000, 2000, 2000, 2000}))

		By("every agent reporting its 2,000 containers running")
		for _, n := range nodes {
			var cs []edgev1alpha1.ObservedContainer
			for _, inst := range assignment(n).Spec.Services[key].Instances {
				cs = append(cs, edgev1alpha1.ObservedContainer{Name: inst.Name, TaskID: inst.TaskID, Revision: inst.Revision, State: edgev1alpha1.ContainerRunning})
			}
			report(n, "linux", cs...)
		}
		Eventually(func() int32 { return getService(ns, "huge").Status.ReadyReplicas }, time.Minute).Should(Equal(int32(10000)))
		Eventually(condition(huge, edgev1alpha1.ConditionReady)).Should(HaveField("Status", metav1.ConditionTrue))

		s := getService(ns, "huge")
		Expect(s.Status.Containers).To(BeEmpty())
		raw, err := json.Marshal(s)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(raw)).To(BeNumerically("<", 16<<10), "the service's object stays small whatever its size")
		for _, n := range nodes {
			raw, err := json.Marshal(assignment(n))
			Expect(err).NotTo(HaveOccurred())
			Expect(len(raw)).To(BeNumerically("<", 1<<20), "each node's assignment stays within what etcd stores (1.5 MiB)")
		}

		By("deleting it: the nodes are told, and it goes once they report no container")
		Expect(k8sClient.Delete(ctx, huge)).To(Succeed())
		Eventually(func() bool { return assignment(nodes[0]).Spec.Services[key].Deleting }, time.Minute).Should(BeTrue())
		for _, n := range nodes {
			report(n, "linux")
		}
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(huge), &edgev1alpha1.EdgeService{}))
		}, time.Minute).Should(BeTrue())
		Expect(assignment(nodes[0]).Spec.Services).NotTo(HaveKey(key))
	})
})

var _ = Describe("EdgeService deletion", func() {
	It("waits for agents to remove the containers", func() {
		ns := newNamespace()
		createNode("del-a", "linux", nil)
		svc := newStatic(ns, "gone", "del-a")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		inst := waitInstances(svc, 1)[0]
		report("del-a", "linux", running(inst, 1))
		// Delete once the controller has seen the container, else it may
		// rightly find none to wait for.
		Eventually(func() edgev1alpha1.DeployStatus { return instancesOf(ns, "gone")[0].DeployStatus }).Should(Equal(edgev1alpha1.DeploySuccess))
		Expect(k8sClient.Delete(ctx, svc)).To(Succeed())
		Consistently(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), &edgev1alpha1.EdgeService{}) }, opts.DeletionTimeout/2).Should(Succeed())
		report("del-a", "linux")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), &edgev1alpha1.EdgeService{}))
		}).Should(BeTrue())
	})

	It("gives up waiting at the deletion timeout", func() {
		ns := newNamespace()
		createNode("del-b", "linux", nil)
		svc := newStatic(ns, "stuck", "del-b")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		report("del-b", "linux", running(waitInstances(svc, 1)[0], 1))
		Eventually(func() edgev1alpha1.DeployStatus { return instancesOf(ns, "stuck")[0].DeployStatus }).Should(Equal(edgev1alpha1.DeploySuccess))
		Expect(k8sClient.Delete(ctx, svc)).To(Succeed())
		start := time.Now()
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), &edgev1alpha1.EdgeService{}))
		}, 3*opts.DeletionTimeout).Should(BeTrue())
		Expect(time.Since(start)).To(BeNumerically(">=", opts.DeletionTimeout-time.Second))
	})

	It("lets go at once when force-deleted", func() {
		ns := newNamespace()
		createNode("del-c", "linux", nil)
		svc := newStatic(ns, "forced", "del-c")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		report("del-c", "linux", running(waitInstances(svc, 1)[0], 1))
		s := getService(ns, "forced")
		patch := client.MergeFrom(s.DeepCopy())
		s.Annotations = map[string]string{edgev1alpha1.AnnotationForceDelete: "true"}
		Expect(k8sClient.Patch(ctx, s, patch)).To(Succeed())
		Expect(k8sClient.Delete(ctx, svc)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), &edgev1alpha1.EdgeService{}))
		}, opts.DeletionTimeout/2).Should(BeTrue())
	})
})

var _ = Describe("EdgeService status under many failures", func() {
	It("still writes a status the API server accepts when 100 instances fail with long messages", func() {
		ns := newNamespace()
		site := map[string]string{"site": ns}
		var nodes []string
		for i := range 10 {
			name := fmt.Sprintf("many-%s-%02d", ns, i)
			createNode(name, "linux", site)
			keepAlive(name)
			report(name, "linux")
			nodes = append(nodes, name)
		}
		for _, n := range nodes {
			Eventually(nodeState(n)).Should(Equal(edgev1alpha1.NodeOnline))
		}
		svc := newDynamic(ns, "many", 100, site)
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		insts := waitInstances(svc, 100)

		By("every container failing with a 4,000-byte message")
		byNode := map[string][]edgev1alpha1.ObservedContainer{}
		for _, inst := range insts {
			c := running(inst, inst.Revision)
			c.State, c.FailedMessage = edgev1alpha1.ContainerExited, "image pull failed: "+strings.Repeat("x", 4000)
			byNode[inst.NodeName] = append(byNode[inst.NodeName], c)
		}
		for n, cs := range byNode {
			report(n, "linux", cs...)
		}
		Eventually(func(g Gomega) {
			s := getService(ns, "many")
			g.Expect(s.Status.FailedReplicas).To(BeEquivalentTo(100))
			g.Expect(s.Status.Failed).To(HaveLen(20), "a bounded sample")
			g.Expect(s.Status.Failed[0].Message).To(HavePrefix("image pull failed: xxx"))
			degraded := meta.FindStatusCondition(s.Status.Conditions, edgev1alpha1.ConditionDegraded)
			g.Expect(degraded).NotTo(BeNil())
			g.Expect(degraded.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(degraded.Message).To(ContainSubstring("and 95 more"))
		}).Should(Succeed())
		Expect(eventReasons(ns, "many")).To(ContainElement(edgev1alpha1.ReasonDeployFailed), "the events went out too (notes within 1 KiB)")
	})
})
