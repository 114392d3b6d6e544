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
	"maps"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/edgeservice"
)

// zoned returns labels with the zone label set: each spec's nodes form a
// zone of their own, apart from the many nodes other specs leave offline.
func zoned(zone string, labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[edgeservice.ZoneLabel] = zone
	return out
}

var _ = Describe("Rescheduling under a partition", func() {
	It("moves nothing off a zone whose nodes went offline together, and runs no extra instances after it heals", func() {
		ns := newNamespace()
		sel := map[string]string{"pool": ns}
		const nodes, services, factor = 6, 3, 2
		stop := map[string]func(){}
		var names []string
		for i := range nodes {
			name := fmt.Sprintf("part-%d-%s", i, ns)
			names = append(names, name)
			createNode(name, "linux", zoned(ns, sel))
			stop[name] = keepAlive(name)
		}
		Eventually(nodeState(names[nodes-1])).Should(Equal(edgev1alpha1.NodeOnline))
		var svcs []*edgev1alpha1.EdgeService
		placed := map[string][]edgev1alpha1.ServiceInstance{}
		for i := range services {
			svc := newDynamic(ns, fmt.Sprintf("part-%d", i), factor, sel)
			Expect(k8sClient.Create(ctx, svc)).To(Succeed())
			svcs = append(svcs, svc)
		}
		for _, svc := range svcs {
			placed[svc.Name] = waitInstances(svc, factor)
		}
		taskIDs := func(svc *edgev1alpha1.EdgeService) []string {
			var out []string
			for _, i := range instancesOf(ns, svc.Name) {
				out = append(out, i.TaskID+"@"+i.NodeName)
			}
			return out
		}
		before := map[string][]string{}
		for _, svc := range svcs {
			before[svc.Name] = taskIDs(svc)
		}

		By("silencing half the nodes past the reschedule grace period")
		for _, name := range names[:nodes/2] {
			stop[name]()
			Expect(k8sClient.Delete(ctx, leaseOf(name))).To(Succeed())
		}
		for _, name := range names[:nodes/2] {
			Eventually(nodeState(name)).Should(Equal(edgev1alpha1.NodeOffline))
		}
		// Past the grace period, each service holding instances on the
		// silent half says why it holds them: the controller has judged
		// those nodes past the grace, and only then is "nothing moves" a
		// claim (a sleep would not know when a busy machine got there).
		held := 0
		for _, svc := range svcs {
			mine := 0
			for _, i := range placed[svc.Name] {
				for _, name := range names[:nodes/2] {
					if i.NodeName == name {
						mine++
					}
				}
			}
			if held += mine; mine > 0 {
				Eventually(func() string {
					c := meta.FindStatusCondition(getService(ns, svc.Name).Status.Conditions, edgev1alpha1.ConditionDegraded)
					if c == nil {
						return ""
					}
					return c.Message
				}).Should(ContainSubstring("looks like a partition"), svc.Name)
			}
		}
		Expect(held).To(BeNumerically(">", 0), "some instances were on the silenced nodes")
		for _, svc := range svcs {
			Consistently(func() []string { return taskIDs(svc) }, 2*time.Second).Should(Equal(before[svc.Name]), "no instance moves off a partitioned zone")
		}

		By("healing the partition")
		for _, name := range names[:nodes/2] {
			keepAlive(name)
		}
		for _, name := range names[:nodes/2] {
			Eventually(nodeState(name)).Should(Equal(edgev1alpha1.NodeOnline))
		}
		for _, svc := range svcs {
			Consistently(func() []edgev1alpha1.ServiceInstance { return instancesOf(ns, svc.Name) }, time.Second).Should(HaveLen(factor))
			Expect(taskIDs(svc)).To(Equal(before[svc.Name]))
			Eventually(condition(svc, edgev1alpha1.ConditionDegraded)).Should(HaveField("Status", BeEquivalentTo("False")))
		}
	})
})
