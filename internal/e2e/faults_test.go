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
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/agent"
)

var _ = Describe("The simulated runtime's scripted faults", func() {
	It("restarts containers of crashing images, and silences a node for a while", func() {
		const node = "edge-fault-01"
		o := agent.DefaultOptions()
		o.Log = GinkgoLogr
		o.Nodes = []agent.Node{{Name: node, Type: "linux", Arch: "amd64", Address: "10.0.8.1:7200"}}
		o.RenewInterval, o.StartDelay, o.MetricsInterval, o.Tick = 500*time.Millisecond, 300*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond
		o.CrashImages = regexp.MustCompile("^crashy@")
		o.Silences = []agent.Silence{{Node: node, After: 6 * time.Second, For: 5 * time.Second}}
		actx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { _ = agent.Run(actx, cfg, o) }()

		Expect(k8sClient.Create(ctx, &edgev1alpha1.EdgeService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "crashy"},
			Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: "/faults", Image: edgev1alpha1.ImageSpec{Ref: "crashy@1#linux"}}, Nodes: []string{node}},
		})).To(Succeed())
		Eventually(func() any {
			c := containersOf("crashy")
			if len(c) == 0 {
				return 0
			}
			return c[0]["restartCnt"]
		}).Should(BeNumerically(">=", 2), "restarts are counted")
		Expect(containersOf("crashy")[0]["deployStatus"]).To(Equal("success"))

		status := func() any { return byName(list("/api/v1/node", "name", node), "name")[node]["status"] }
		Eventually(status).Should(Equal("offline"), "silent: no Lease renewals")
		Eventually(status).Should(Equal("online"), "back after the silence")
	})
})
