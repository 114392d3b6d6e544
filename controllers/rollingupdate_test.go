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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// Rollouts in waves, paused, past their deadline and rolled back, against
// a manager whose clock the specs step: the deadline is ten minutes that
// take no time.
var _ = Describe("Rollouts", Ordered, func() {
	var clk *clocktesting.FakeClock
	BeforeAll(func() {
		stopManager()
		DeferCleanup(func() { stopManager = startManager(nil) })
		clk = clocktesting.NewFakeClock(time.Now())
		o := opts
		o.Clock = clk
		// The agents' Leases are renewed on the real clock; stepping this
		// one must not take their nodes offline.
		o.NodeGracePeriod = 24 * time.Hour
		// The specs read each wave's status as it comes; on this clock a
		// held status would wait for a step.
		o.StatusHold = 0
		DeferCleanup(startManagerWith(o, nil))
	})

	spec := 0
	// deployed creates n linux nodes and a static service on them with
	// strategy, and brings revision 1 to every instance.
	deployed := func(n int, strategy edgev1alpha1.ServiceStrategy, change func(*edgev1alpha1.EdgeService)) *edgev1alpha1.EdgeService {
		GinkgoHelper()
		spec++
		ns := newNamespace()
		var nodes []string
		for i := range n {
			name := fmt.Sprintf("roll-%d-%d", spec, i)
			createNode(name, "linux", nil)
			DeferCleanup(keepAlive(name))
			nodes = append(nodes, name)
		}
		svc := newStatic(ns, "web", nodes...)
		svc.Spec.Strategy = strategy
		if change != nil {
			change(svc)
		}
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		for _, inst := range waitInstances(svc, n) {
			report(inst.NodeName, "linux", running(inst, inst.Revision))
		}
		Eventually(func() int64 { return getService(ns, "web").Status.DeployedRevision }).Should(Equal(int64(1)))
		return svc
	}
	// atRevision lists the nodes whose instance is placed at rev.
	atRevision := func(svc *edgev1alpha1.EdgeService, rev int64) func() []string {
		return func() []string {
			var out []string
			for _, inst := range instancesOf(svc.Namespace, svc.Name) {
				if inst.Revision == rev {
					out = append(out, inst.NodeName)
				}
			}
			return out
		}
	}
	// runAt reports every instance placed at rev as running it, and the
	// others as they were.
	runAt := func(svc *edgev1alpha1.EdgeService, rev int64) {
		GinkgoHelper()
		for _, inst := range instancesOf(svc.Namespace, svc.Name) {
			if inst.Revision == rev {
				report(inst.NodeName, "linux", running(inst, rev))
			}
		}
	}
	failAt := func(svc *edgev1alpha1.EdgeService, rev int64) {
		GinkgoHelper()
		for _, inst := range instancesOf(svc.Namespace, svc.Name) {
			if inst.Revision == rev {
				c := running(inst, rev)
				c.State, c.StartedTime, c.FailedMessage = edgev1alpha1.ContainerExited, nil, "pull access denied for bad"
				report(inst.NodeName, "linux", c)
			}
		}
	}
	imageOn := func(svc *edgev1alpha1.EdgeService, node string) string {
		return string(assignment(node).Spec.Services[edgev1alpha1.AssignmentKey(svc.Namespace, svc.Name)].Spec.Image.Ref)
	}
	stalled := func(svc *edgev1alpha1.EdgeService) func() string {
		return func() string {
			if c := condition(getService(svc.Namespace, svc.Name), "Stalled")(); c != nil && c.Status == metav1.ConditionTrue {
				return c.Reason
			}
			return ""
		}
	}
	// poke wakes the service's reconcile after the clock moved, as its
	// requeue would once the real time passed.
	poke := func(svc *edgev1alpha1.EdgeService) {
		GinkgoHelper()
		update(svc, func(s *edgev1alpha1.EdgeService) {
			if s.Annotations == nil {
				s.Annotations = map[string]string{}
			}
			s.Annotations["test/poke"] = clk.Now().String()
		})
	}
	rolling := func(maxUnavailable, canary int32, autoRollback bool) edgev1alpha1.ServiceStrategy {
		return edgev1alpha1.ServiceStrategy{Type: edgev1alpha1.StrategyRollingUpdate, AutoRollback: autoRollback,
			RollingUpdate: &edgev1alpha1.RollingUpdateStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(maxUnavailable)), Canary: ptr.To(intstr.FromInt32(canary))}}
	}

	It("moves a rolling update in waves, a canary first, and records it once", func() {
		svc := deployed(4, rolling(1, 1, false), nil)
		update(svc, setImage("app@2.0#linux"))

		By("moving the canary alone, the other nodes keeping revision 1's configuration")
		Eventually(atRevision(svc, 2)).Should(HaveLen(1))
		Consistently(atRevision(svc, 2), "500ms").Should(HaveLen(1))
		canary := atRevision(svc, 2)()[0]
		for _, node := range atRevision(svc, 1)() {
			Expect(imageOn(svc, node)).To(Equal("app@1.0#linux"))
		}
		Expect(imageOn(svc, canary)).To(Equal("app@2.0#linux"))
		Expect(condition(getService(svc.Namespace, "web"), edgev1alpha1.ConditionProgressing)().Message).To(ContainSubstring("canary of 1 instances"))
		Expect(getService(svc.Namespace, "web").Status.UpdatedReplicas).To(Equal(int32(1)))

		By("moving one more node at a time once the canary runs")
		runAt(svc, 2)
		for want := 2; want <= 4; want++ {
			Eventually(atRevision(svc, 2)).Should(HaveLen(want))
			Consistently(atRevision(svc, 2), "300ms").Should(HaveLen(want), "maxUnavailable 1 holds the next wave")
			runAt(svc, 2)
		}
		Eventually(func() int64 { return getService(svc.Namespace, "web").Status.DeployedRevision }).Should(Equal(int64(2)))
		Expect(images(records(svc.Namespace, "web"))).To(Equal([]string{"1:app@1.0#linux", "2:app@2.0#linux"}), "a rollout in waves is one record")
		Expect(getService(svc.Namespace, "web").Status.UpdatedReplicas).To(Equal(int32(4)))
	})

	It("holds a paused rollout where it is and goes on when resumed", func() {
		svc := deployed(2, edgev1alpha1.ServiceStrategy{}, nil)
		update(svc, func(s *edgev1alpha1.EdgeService) { s.Spec.Paused, s.Spec.Image.Ref = true, "app@2.0#linux" })

		Eventually(func() int64 { return getService(svc.Namespace, "web").Status.Revision }).Should(Equal(int64(2)))
		Consistently(atRevision(svc, 2), "500ms").Should(BeEmpty())
		c := condition(getService(svc.Namespace, "web"), edgev1alpha1.ConditionProgressing)()
		Expect(c.Status).To(Equal(metav1.ConditionUnknown))
		Expect(c.Reason).To(Equal(edgev1alpha1.ReasonRolloutPaused))
		Expect(c.Message).To(ContainSubstring("paused at 0 of 2 instances at revision 2"))

		By("not stalling while paused, however long")
		clk.Step(time.Hour)
		poke(svc)
		Consistently(stalled(svc), "500ms").Should(BeEmpty())

		update(svc, func(s *edgev1alpha1.EdgeService) { s.Spec.Paused = false })
		Eventually(atRevision(svc, 2)).Should(HaveLen(2))
		runAt(svc, 2)
		Eventually(func() int64 { return getService(svc.Namespace, "web").Status.DeployedRevision }).Should(Equal(int64(2)))
		Expect(images(records(svc.Namespace, "web"))).To(HaveLen(2))
	})

	It("stalls a failed canary, says so, and rolls back once", func() {
		svc := deployed(3, rolling(1, 1, true), nil)
		update(svc, setImage("bad@2.0#linux"))
		Eventually(atRevision(svc, 2)).Should(HaveLen(1))
		failAt(svc, 2)

		By("rolling back to revision 1's configuration as revision 3")
		Eventually(func() []string { return images(records(svc.Namespace, "web")) }).Should(
			Equal([]string{"1:app@1.0#linux", "2:bad@2.0#linux", "3:app@1.0#linux"}))
		Expect(eventReasons(svc.Namespace, "web")).To(ContainElements(edgev1alpha1.ReasonCanaryFailed, edgev1alpha1.ReasonRolledBack))
		Expect(string(getService(svc.Namespace, "web").Spec.Image.Ref)).To(Equal("app@1.0#linux"))
		By("moving in waves again, the failed canary's node first")
		Eventually(atRevision(svc, 3)).Should(HaveLen(1))
		Eventually(func() []string { runAt(svc, 3); return atRevision(svc, 3)() }).WithPolling(300 * time.Millisecond).Should(HaveLen(3))
		runAt(svc, 3)
		Eventually(func() int64 { return getService(svc.Namespace, "web").Status.DeployedRevision }).Should(Equal(int64(3)))
		Expect(stalled(svc)()).To(BeEmpty())
		Consistently(func() int { return len(records(svc.Namespace, "web")) }, "700ms").Should(Equal(3), "rolled back exactly once")
		Expect(countOf(eventReasons(svc.Namespace, "web"), edgev1alpha1.ReasonRolledBack)).To(Equal(1))
	})

	It("stalls a rollout past its progress deadline and rolls back once when asked", func() {
		svc := deployed(2, edgev1alpha1.ServiceStrategy{}, func(s *edgev1alpha1.EdgeService) { s.Spec.ProgressDeadlineSeconds = ptr.To(int32(600)) })
		update(svc, setImage("app@2.0#linux"))
		Eventually(atRevision(svc, 2)).Should(HaveLen(2))
		one := instancesOf(svc.Namespace, "web")[0]
		report(one.NodeName, "linux", running(one, 2)) // the other pulls forever
		// Progress counts when the manager sees it: before the clock moves.
		Eventually(func() int32 { return getService(svc.Namespace, "web").Status.ReadyReplicas }).Should(Equal(int32(1)))

		clk.Step(9 * time.Minute)
		poke(svc)
		Consistently(stalled(svc), "500ms").Should(BeEmpty(), "nine minutes is inside the deadline")
		clk.Step(2 * time.Minute)
		poke(svc)
		Eventually(stalled(svc)).Should(Equal(edgev1alpha1.ReasonProgressDeadlineExceeded))
		Expect(condition(getService(svc.Namespace, "web"), "Stalled")().Message).To(ContainSubstring("1 of 2 instances run it"))
		Expect(eventReasons(svc.Namespace, "web")).To(ContainElement(edgev1alpha1.ReasonProgressDeadlineExceeded))
		Consistently(func() string { return string(getService(svc.Namespace, "web").Spec.Image.Ref) }, "500ms").Should(Equal("app@2.0#linux"),
			"no rollback without autoRollback")

		update(svc, func(s *edgev1alpha1.EdgeService) { s.Spec.Strategy.AutoRollback = true })
		Eventually(func() []string { return images(records(svc.Namespace, "web")) }).Should(
			Equal([]string{"1:app@1.0#linux", "2:app@2.0#linux", "3:app@1.0#linux"}))
		Consistently(func() int { return len(records(svc.Namespace, "web")) }, "700ms").Should(Equal(3), "rolled back exactly once")
		Expect(countOf(eventReasons(svc.Namespace, "web"), edgev1alpha1.ReasonRolledBack)).To(Equal(1))
	})
})

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}
