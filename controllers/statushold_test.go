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
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers"
)

// statusPatchOf names the service whose status req patches.
func statusPatchOf(req *http.Request) (string, bool) {
	const kind = "/edgeservices/"
	i := strings.LastIndex(req.URL.Path, kind)
	if req.Method != http.MethodPatch || i < 0 || !strings.HasSuffix(req.URL.Path, "/status") {
		return "", false
	}
	return strings.TrimSuffix(req.URL.Path[i+len(kind):], "/status"), true
}

// statusWrites counts the status patches of each service by name.
type statusWrites struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *statusWrites) of(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[name]
}

func (s *statusWrites) wrap(rt http.RoundTripper) http.RoundTripper {
	return &statusCounter{RoundTripper: rt, s: s}
}

type statusCounter struct {
	http.RoundTripper
	s *statusWrites
}

// RoundTrip counts the status patches the API server took; one refused
// (a conflict from a stale cache) wrote nothing.
func (c *statusCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.RoundTripper.RoundTrip(req)
	if name, ok := statusPatchOf(req); ok && err == nil && resp.StatusCode < 300 {
		c.s.mu.Lock()
		c.s.n[name]++
		c.s.mu.Unlock()
	}
	return resp, err
}

// A change's progress is held for --status-hold (5 s by default), against
// a manager whose clock the spec steps: what the hold folds is decided by
// that clock, not by how fast this machine is.
var _ = Describe("A service's status during a healthy rollout", Ordered, func() {
	var (
		clk    *clocktesting.FakeClock
		writes *statusWrites
	)
	BeforeAll(func() {
		stopManager()
		DeferCleanup(func() { stopManager = startManager(nil) })
		clk = clocktesting.NewFakeClock(time.Now())
		o := opts
		o.Clock = clk
		o.NodeGracePeriod = 24 * time.Hour // the Leases are renewed on the real clock
		o.StatusHold = controllers.DefaultOptions().StatusHold
		Expect(o.StatusHold).To(Equal(5 * time.Second))
		writes = &statusWrites{n: map[string]int{}}
		DeferCleanup(startManagerWith(o, writes.wrap))
		for _, n := range []string{"hold-a", "hold-b"} {
			createNode(n, "linux", nil)
			keepAlive(n)
		}
	})

	// deployed creates a static service on node and brings revision 1 to
	// its instance; it returns the instance and the status writes so far.
	deployed := func(ns, name, node string) (edgev1alpha1.ServiceInstance, int) {
		GinkgoHelper()
		svc := newStatic(ns, name, node)
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		By("writing a new service's first status at once, which kstatus needs to see it in progress")
		Eventually(func() int64 { return getService(ns, name).Status.ObservedGeneration }).Should(Equal(int64(1)))
		inst := waitInstances(svc, 1)[0]
		report(node, "linux", running(inst, 1))
		Eventually(condition(svc, edgev1alpha1.ConditionAvailable)).Should(HaveField("Status", metav1.ConditionTrue))
		return inst, writes.of(name)
	}
	// changed changes a service's image and waits for its instance to be
	// told revision 2.
	changed := func(ns, name string) edgev1alpha1.ServiceInstance {
		GinkgoHelper()
		update(getService(ns, name), setImage("app@2.0#linux"))
		var inst edgev1alpha1.ServiceInstance
		Eventually(func() int64 {
			inst = instancesOf(ns, name)[0]
			return inst.Revision
		}).Should(Equal(int64(2)))
		return inst
	}

	It("writes a spec change's rollout once when its instances run within the hold", func() {
		ns := newNamespace()
		_, before := deployed(ns, "quick", "hold-a")
		inst := changed(ns, "quick")
		Consistently(func() int64 { return getService(ns, "quick").Status.ObservedGeneration }, time.Second).Should(Equal(int64(1)),
			"the change's progress is held; observedGeneration below the spec's says it is in progress")

		report("hold-a", "linux", running(inst, 2))
		Eventually(func() int64 { return getService(ns, "quick").Status.DeployedRevision }).Should(Equal(int64(2)))
		got := getService(ns, "quick").Status
		Expect(got.ObservedGeneration).To(Equal(int64(2)))
		Expect(got.CurrentRecord).To(Equal("quick-2"))
		Expect(meta.IsStatusConditionTrue(got.Conditions, edgev1alpha1.ConditionAvailable)).To(BeTrue())
		Consistently(func() int { return writes.of("quick") }, time.Second).Should(Equal(before + 1))
	})

	It("writes the progress of a change that takes longer once the hold ends, and a failure at once", func() {
		ns := newNamespace()
		_, before := deployed(ns, "slow", "hold-b")
		inst := changed(ns, "slow")
		Consistently(func() int { return writes.of("slow") }, time.Second).Should(Equal(before))

		clk.Step(5 * time.Second)
		Eventually(func() int64 { return getService(ns, "slow").Status.ObservedGeneration }).Should(Equal(int64(2)))
		Expect(condition(getService(ns, "slow"), edgev1alpha1.ConditionProgressing)()).To(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", edgev1alpha1.ReasonDeploying)))
		Expect(writes.of("slow")).To(Equal(before + 1))

		By("failing, which is not held")
		report("hold-b", "linux", edgev1alpha1.ObservedContainer{Name: inst.Name, TaskID: inst.TaskID, Revision: 2, FailedMessage: "image app@2.0#linux not found"})
		Eventually(condition(getService(ns, "slow"), edgev1alpha1.ConditionDegraded)).Should(HaveField("Reason", edgev1alpha1.ReasonDeployFailed))
		Expect(writes.of("slow")).To(Equal(before + 2))
	})
})
