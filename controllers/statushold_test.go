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

func (c *statusCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if name, ok := statusPatchOf(req); ok {
		c.s.mu.Lock()
		c.s.n[name]++
		c.s.mu.Unlock()
	}
	return c.RoundTripper.RoundTrip(req)
}

// A rollout's progress is held for --status-hold (5 s by default), against
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

	It("is written once when the instances run within the hold", func() {
		ns := newNamespace()
		svc := newStatic(ns, "quick", "hold-a")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		insts := waitInstances(svc, 1)
		Consistently(func() int64 { return getService(ns, "quick").Status.ObservedGeneration }, time.Second).Should(BeZero(),
			"a rollout just begun is not written while the hold runs")

		report("hold-a", "linux", running(insts[0], 1))
		Eventually(condition(svc, edgev1alpha1.ConditionAvailable)).Should(HaveField("Status", metav1.ConditionTrue))
		got := getService(ns, "quick").Status
		Expect(got.ObservedGeneration).To(Equal(int64(1)))
		Expect(got.CurrentRecord).To(Equal("quick-1"))
		Expect(got.DeployedRevision).To(Equal(int64(1)))
		Consistently(func() int { return writes.of("quick") }, time.Second).Should(Equal(1))
	})

	It("writes the progress of a rollout that takes longer once the hold ends, and a failure at once", func() {
		ns := newNamespace()
		svc := newStatic(ns, "slow", "hold-b")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		insts := waitInstances(svc, 1)
		Consistently(func() int { return writes.of("slow") }, time.Second).Should(BeZero())

		clk.Step(5 * time.Second)
		Eventually(condition(svc, edgev1alpha1.ConditionProgressing)).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", edgev1alpha1.ReasonDeploying)))
		Expect(getService(ns, "slow").Status.ObservedGeneration).To(Equal(int64(1)))
		Expect(writes.of("slow")).To(Equal(1))

		By("failing, which is not held")
		report("hold-b", "linux", edgev1alpha1.ObservedContainer{Name: insts[0].Name, TaskID: insts[0].TaskID, Revision: 1, FailedMessage: "image app@1.0#linux not found"})
		Eventually(condition(svc, edgev1alpha1.ConditionDegraded)).Should(HaveField("Reason", edgev1alpha1.ReasonDeployFailed))
		Expect(writes.of("slow")).To(Equal(2))
	})
})
