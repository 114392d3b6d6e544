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
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
)

var _ = Describe("The simulated runtime's scripted faults", func() {
	faultAgent := func(node string, silences ...sim.Silence) {
		o := agent.DefaultOptions()
		o.Log = GinkgoLogr
		o.Nodes = []agent.Node{{Name: node, Type: "linux", Arch: "amd64", Address: "10.0.8.1:7200"}}
		o.RenewInterval, o.MetricsInterval, o.Tick = 500*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond
		so := sim.DefaultOptions()
		so.StartDelay, so.CrashImages = 300*time.Millisecond, regexp.MustCompile("^crashy@")
		o.NewRuntime, o.Silent = sim.Runtimes(so), sim.Silent(silences, time.Now())
		actx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = agent.Run(actx, cfg, o)
		}()
		// The node goes with its spec: a node left offline would count
		// towards a partition of the suite's other nodes (controllers'
		// zone rule) and hold instances that other specs expect to move.
		DeferCleanup(func() {
			stop()
			<-done
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: node}}))).To(Succeed())
		})
	}

	It("restarts containers of crashing images", func() {
		const node = "edge-fault-01"
		faultAgent(node)
		svc := &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "crashy"},
			Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: "/faults", Image: edgev1alpha1.ImageSpec{Ref: "crashy@1#linux"}}, Nodes: []string{node}},
		}
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, svc))).To(Succeed()) })
		Eventually(func() any {
			c := containersOf("crashy")
			if len(c) == 0 {
				return 0
			}
			return c[0]["restartCnt"]
		}).Should(BeNumerically(">=", 2), "restarts are counted")
		Expect(containersOf("crashy")[0]["deployStatus"]).To(Equal("success"))
	})

	It("silences a node for a while: offline without Lease renewals, online after", func() {
		const node = "edge-fault-02"
		// The node's states are recorded from before its agent starts, so
		// that a busy machine cannot make the test look after the silence
		// has passed.
		var mu sync.Mutex
		var seen []edgev1alpha1.NodeState
		rctx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go func() {
			for rctx.Err() == nil {
				n := &edgev1alpha1.EdgeNode{}
				if err := k8sClient.Get(rctx, client.ObjectKey{Name: node}, n); err == nil && n.Status.Status != "" {
					mu.Lock()
					if len(seen) == 0 || seen[len(seen)-1] != n.Status.Status {
						seen = append(seen, n.Status.Status)
					}
					mu.Unlock()
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		faultAgent(node, sim.Silence{Node: node, After: 3 * time.Second, For: 8 * time.Second})
		states := func() []edgev1alpha1.NodeState {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(seen)
		}
		Eventually(states).Should(ContainElements(edgev1alpha1.NodeOnline), "online while it renews its Lease")
		Eventually(func() bool {
			return inOrder(states(), edgev1alpha1.NodeOnline, edgev1alpha1.NodeOffline, edgev1alpha1.NodeOnline)
		}).Should(BeTrue(), func() string {
			return fmt.Sprintf("offline while silent (no Lease renewals), online after; seen %v", states())
		})
		Expect(byName(list("/api/v1/node", "name", node), "name")[node]["status"]).To(Equal("online"), "the facade says so too")
	})
})

// inOrder says whether want occurs in seq in this order, not necessarily
// next to each other.
func inOrder[T comparable](seq []T, want ...T) bool {
	for _, v := range seq {
		if len(want) > 0 && v == want[0] {
			want = want[1:]
		}
	}
	return len(want) == 0
}
