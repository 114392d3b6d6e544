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
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

func nodeState(name string) func() edgev1alpha1.NodeState {
	return func() edgev1alpha1.NodeState { return getNode(name).Status.Status }
}

var _ = Describe("EdgeNode liveness", func() {
	It("judges a node behind the hub again when its replica's Lease shows up after the node's", func() {
		createNode("via-late-hub", "linux", nil)
		now := metav1.NewMicroTime(time.Now())
		Expect(k8sClient.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "via-late-hub", Namespace: opts.LeaseNamespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(hubapi.HolderPrefix + "hub-late"), AcquireTime: &now, RenewTime: &now}})).To(Succeed())
		// Offline first for want of a Lease (LeaseMissing) if the node was
		// judged before its Lease came; then for want of its replica's.
		Eventually(func() string {
			ready := meta.FindStatusCondition(getNode("via-late-hub").Status.Conditions, edgev1alpha1.ConditionReady)
			if ready == nil {
				return ""
			}
			return ready.Reason
		}).Should(Equal(edgev1alpha1.ReasonHubReplicaLost))
		Expect(nodeState("via-late-hub")()).To(Equal(edgev1alpha1.NodeOffline))
		Expect(k8sClient.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "hub-late", Namespace: opts.LeaseNamespace,
			Labels: map[string]string{hubapi.LabelHubReplica: "true"}}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("hub-late"), RenewTime: &now}})).To(Succeed())
		Eventually(nodeState("via-late-hub")).Should(Equal(edgev1alpha1.NodeOnline), "with nothing else written")
	})

	It("follows a node behind the edge hub by the hub replica's Lease, with no write of the node's own", func() {
		createNode("via-hub", "linux", nil)
		hubLease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "hub-r1", Namespace: opts.LeaseNamespace,
			Labels: map[string]string{hubapi.LabelHubReplica: "true"}}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("hub-r1")}}
		renewHub := func() {
			GinkgoHelper()
			hubLease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			if hubLease.ResourceVersion == "" {
				Expect(k8sClient.Create(ctx, hubLease)).To(Succeed())
			} else {
				Expect(k8sClient.Update(ctx, hubLease)).To(Succeed())
			}
		}
		renewHub()
		now := metav1.NewMicroTime(time.Now())
		nodeLease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "via-hub", Namespace: opts.LeaseNamespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(hubapi.HolderPrefix + "hub-r1"), AcquireTime: &now, RenewTime: &now}}
		Expect(k8sClient.Create(ctx, nodeLease)).To(Succeed())
		Eventually(nodeState("via-hub")).Should(Equal(edgev1alpha1.NodeOnline))

		By("staying online for longer than the grace period while the hub replica renews its own Lease")
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(300 * time.Millisecond):
					renewHub()
				}
			}
		}()
		Consistently(nodeState("via-hub"), 2*opts.NodeGracePeriod, 100*time.Millisecond).Should(Equal(edgev1alpha1.NodeOnline))

		By("going offline at once when the hub releases the node's Lease")
		nodeLease.Spec.HolderIdentity = ptr.To("")
		Expect(k8sClient.Update(ctx, nodeLease)).To(Succeed())
		Eventually(nodeState("via-hub"), opts.NodeGracePeriod/2).Should(Equal(edgev1alpha1.NodeOffline))
		Expect(meta.FindStatusCondition(getNode("via-hub").Status.Conditions, edgev1alpha1.ConditionReady).Reason).To(Equal(edgev1alpha1.ReasonAgentDisconnected))

		By("online again when a replica holds it, offline once that replica stops renewing")
		nodeLease.Spec.HolderIdentity = ptr.To(hubapi.HolderPrefix + "hub-r1")
		Expect(k8sClient.Update(ctx, nodeLease)).To(Succeed())
		Eventually(nodeState("via-hub")).Should(Equal(edgev1alpha1.NodeOnline))
		close(stop)
		<-done
		Eventually(nodeState("via-hub"), 4*opts.NodeGracePeriod).Should(Equal(edgev1alpha1.NodeOffline))
		Expect(meta.FindStatusCondition(getNode("via-hub").Status.Conditions, edgev1alpha1.ConditionReady).Reason).To(Equal(edgev1alpha1.ReasonHubReplicaLost))
	})

	It("is offline without a Lease, online while the agent renews it, offline after the grace period", func() {
		createNode("live-1", "linux", nil)
		Eventually(nodeState("live-1")).Should(Equal(edgev1alpha1.NodeOffline))
		ready := meta.FindStatusCondition(getNode("live-1").Status.Conditions, edgev1alpha1.ConditionReady)
		Expect(ready).NotTo(BeNil())
		Expect(ready.Status).To(Equal(metav1.ConditionUnknown))
		Expect(ready.Reason).To(Equal(edgev1alpha1.ReasonLeaseMissing))

		renewLease("live-1")
		Eventually(nodeState("live-1")).Should(Equal(edgev1alpha1.NodeOnline))
		Expect(meta.IsStatusConditionTrue(getNode("live-1").Status.Conditions, edgev1alpha1.ConditionReady)).To(BeTrue())

		By("staying online while the Lease is renewed")
		stop := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			for {
				select {
				case <-stop:
					return
				case <-time.After(300 * time.Millisecond):
					renewLease("live-1")
				}
			}
		}()
		Consistently(nodeState("live-1"), 3*opts.NodeGracePeriod/2, 100*time.Millisecond).Should(Equal(edgev1alpha1.NodeOnline))
		close(stop)

		By("going offline once renewals stop, with nothing else happening")
		stopped := time.Now()
		Eventually(nodeState("live-1"), 4*opts.NodeGracePeriod).Should(Equal(edgev1alpha1.NodeOffline))
		Expect(time.Since(stopped)).To(BeNumerically(">=", opts.NodeGracePeriod-500*time.Millisecond))
		ready = meta.FindStatusCondition(getNode("live-1").Status.Conditions, edgev1alpha1.ConditionReady)
		Expect(ready.Status).To(Equal(metav1.ConditionUnknown))
		Expect(ready.Reason).To(Equal(edgev1alpha1.ReasonLeaseExpired))

		By("coming back online on the next renewal")
		renewLease("live-1")
		Eventually(nodeState("live-1"), opts.NodeGracePeriod).Should(Equal(edgev1alpha1.NodeOnline))
	})
})

var _ = Describe("EdgeNode liveness with an agent whose clock is wrong", func() {
	// renewSkewed renews the node's Lease every 300 ms with a clock off by
	// skew, until the returned function is called.
	renewSkewed := func(node string, skew time.Duration) (stop func()) {
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			for {
				Expect(testenv.RenewLeaseAt(ctx, k8sClient, opts.LeaseNamespace, node, time.Now().Add(skew))).To(Succeed())
				select {
				case <-done:
					return
				case <-time.After(300 * time.Millisecond):
				}
			}
		}()
		var once sync.Once
		stop = func() { once.Do(func() { close(done) }) }
		DeferCleanup(stop)
		return stop
	}

	It("keeps a node online while it renews, though its clock is an hour behind", func() {
		createNode("skew-behind", "linux", nil)
		renewSkewed("skew-behind", -time.Hour)
		Eventually(nodeState("skew-behind")).Should(Equal(edgev1alpha1.NodeOnline))
		Consistently(nodeState("skew-behind"), 2*opts.NodeGracePeriod, 100*time.Millisecond).Should(Equal(edgev1alpha1.NodeOnline))
	})

	It("takes a node offline a grace period after it stops, though its clock is an hour ahead", func() {
		createNode("skew-ahead", "linux", nil)
		stop := renewSkewed("skew-ahead", time.Hour)
		Eventually(nodeState("skew-ahead")).Should(Equal(edgev1alpha1.NodeOnline))
		stop()
		Eventually(nodeState("skew-ahead"), 4*opts.NodeGracePeriod).Should(Equal(edgev1alpha1.NodeOffline))
	})
})

var _ = Describe("EdgeNode counts", func() {
	It("keeps the counts the agent reports through the controller's own status writes", func() {
		createNode("count-1", "linux", nil)
		stopRenewing := keepAlive("count-1")
		svc := newStatic("default", "counted", "count-1")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		inst := waitInstances(svc, 1)[0]

		report("count-1", "linux",
			running(inst, 1),
			edgev1alpha1.ObservedContainer{Name: "unmanaged-running", State: edgev1alpha1.ContainerRunning},
			edgev1alpha1.ObservedContainer{Name: "unmanaged-exited", State: edgev1alpha1.ContainerExited},
			edgev1alpha1.ObservedContainer{Name: "unmanaged-paused", State: edgev1alpha1.ContainerPaused},
			edgev1alpha1.ObservedContainer{Name: "stale-task", TaskID: "no-such-task", State: edgev1alpha1.ContainerRunning},
		)
		Eventually(func() edgev1alpha1.EdgeNodeStatus { return getNode("count-1").Status }).Should(And(
			HaveField("ContainerTotal", int32(5)),
			HaveField("ContainerRunning", int32(3)),
			HaveField("ContainerManagedTotal", int32(1)),
			HaveField("ContainerManagedRunning", int32(1)),
			HaveField("AppTotal", int32(1)),
			HaveField("AppRunning", int32(1)),
		))

		By("following the agent when the managed container stops")
		stopped := running(inst, 1)
		stopped.State = edgev1alpha1.ContainerExited
		report("count-1", "linux", stopped)
		Eventually(func() edgev1alpha1.EdgeNodeStatus { return getNode("count-1").Status }).Should(And(
			HaveField("ContainerTotal", int32(1)),
			HaveField("ContainerRunning", int32(0)),
			HaveField("ContainerManagedTotal", int32(1)),
			HaveField("ContainerManagedRunning", int32(0)),
			HaveField("AppTotal", int32(1)),
			HaveField("AppRunning", int32(0)),
		))

		By("the controller marking the node offline leaves the agent's counts")
		stopRenewing()
		Expect(k8sClient.Delete(ctx, leaseOf("count-1"))).To(Succeed())
		Eventually(nodeState("count-1")).Should(Equal(edgev1alpha1.NodeOffline))
		Expect(getNode("count-1").Status).To(And(
			HaveField("ContainerTotal", int32(1)),
			HaveField("ContainerManagedTotal", int32(1)),
			HaveField("AppTotal", int32(1)),
		))
	})
})

var _ = Describe("EdgeNode status ownership", func() {
	It("keeps the agent's and the controller's fields apart when their writes interleave", func() {
		createNode("owners-1", "linux", nil)
		for i := 0; i < 5; i++ {
			renewLease("owners-1")
			containers := make([]edgev1alpha1.ObservedContainer, i+1)
			for j := range containers {
				containers[j] = edgev1alpha1.ObservedContainer{Name: "c" + string(rune('a'+j)), State: edgev1alpha1.ContainerRunning,
					CPU: &edgev1alpha1.CPUUsage{Total: 12.5, Cores: []float64{10, 15}}, Memory: &edgev1alpha1.MemoryUsage{Usage: int64(j) << 20}}
			}
			report("owners-1", "linux", containers...)
			want := int32(i + 1)
			// The controller's writes (liveness) and the agent's (containers
			// and their counts) interleave; neither may drop the other's.
			Eventually(func() edgev1alpha1.EdgeNodeStatus { return getNode("owners-1").Status }).Should(And(
				HaveField("Status", edgev1alpha1.NodeOnline),
				HaveField("ContainerTotal", want),
				HaveField("Containers", HaveLen(int(want))),
				HaveField("NodeInfo.AgentVersion", "test"),
			))
		}
		n := getNode("owners-1")
		Expect(n.Status.Containers[0].CPU.Total).To(Equal(12.5))

		managers := map[string][]string{}
		full := &edgev1alpha1.EdgeNode{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(n), full)).To(Succeed())
		for _, mf := range full.ManagedFields {
			if mf.Subresource == "status" {
				managers[mf.Manager] = append(managers[mf.Manager], string(mf.FieldsV1.Raw))
			}
		}
		Expect(managers).To(HaveKey(agentFieldOwner))
		Expect(managers).To(HaveKey("edgeplane-controller"))
		Expect(managers["edgeplane-controller"][0]).NotTo(ContainSubstring("f:containers"))
		Expect(managers["edgeplane-controller"][0]).NotTo(ContainSubstring("f:containerTotal"), "the agent writes the counts")
		Expect(managers[agentFieldOwner][0]).To(ContainSubstring("f:containerTotal"))
		Expect(managers[agentFieldOwner][0]).To(ContainSubstring(`"f:nodeInfo":{}`))
		Expect(managers[agentFieldOwner][0]).NotTo(ContainSubstring("f:agentVersion"), "nodeInfo is one field")
		Expect(managers[agentFieldOwner][0]).NotTo(ContainSubstring(`"f:status":{}`), "the controller writes online or offline")
	})

	It("writes no status when nothing changed", func() {
		createNode("quiet-1", "linux", nil)
		keepAlive("quiet-1")
		Eventually(nodeState("quiet-1")).Should(Equal(edgev1alpha1.NodeOnline))
		// Wake the reconciler with a change that alters nothing it writes.
		n := getNode("quiet-1")
		patch := client.MergeFrom(n.DeepCopy())
		n.Annotations = map[string]string{"touched": "yes"}
		Expect(k8sClient.Patch(ctx, n, patch)).To(Succeed())
		rv := n.ResourceVersion
		Consistently(func() string { return getNode("quiet-1").ResourceVersion }, 2*opts.NodeGracePeriod, 100*time.Millisecond).Should(Equal(rv))
	})
})
