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

package apiserver_test

import (
	"net/url"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// createNode creates an EdgeNode and plays its agent once: a fresh Lease
// and a status report with node info and boot time.
func createNode(name, osType, arch string, containers ...edgev1alpha1.ObservedContainer) *edgev1alpha1.EdgeNode {
	GinkgoHelper()
	n := &edgev1alpha1.EdgeNode{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       edgev1alpha1.EdgeNodeSpec{Address: "10.3.0.7:7200", TLS: true, Type: osType, Arch: arch},
	}
	Expect(k8sClient.Create(ctx, n)).To(Succeed())
	Expect(testenv.RenewLease(ctx, k8sClient, opts.LeaseNamespace, name)).To(Succeed())
	alive.Store(name, true)
	report(n, containers...)
	Eventually(func() edgev1alpha1.NodeState { return getNode(name).Status.Status }).Should(Equal(edgev1alpha1.NodeOnline))
	return getNode(name)
}

var (
	// alive holds the nodes whose agents renew their Leases.
	alive sync.Map
	// renewing is held through each round of renewals.
	renewing sync.Mutex
)

// renewLeases plays the agents of the alive nodes until ctx ends,
// renewing every 500 ms as an agent's --renew-interval would.
func renewLeases() {
	defer GinkgoRecover()
	for ctx.Err() == nil {
		renewing.Lock()
		alive.Range(func(name, _ any) bool {
			_ = testenv.RenewLease(ctx, k8sClient, opts.LeaseNamespace, name.(string))
			return true
		})
		renewing.Unlock()
		time.Sleep(500 * time.Millisecond)
	}
}

// silence stops a node's agent: once it returns, no renewal of the
// node's Lease starts, and its Lease is deleted, so that the node is
// offline at once rather than after a grace period a busy machine could
// stretch or shrink.
func silence(name string) {
	GinkgoHelper()
	renewing.Lock()
	alive.Delete(name)
	renewing.Unlock()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: opts.LeaseNamespace, Name: name}}
	Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, lease))).To(Succeed())
}

// bootTime is when every test node booted.
var bootTime = metav1.NewTime(metav1.Now().Add(-3600e9).Truncate(1e9))

// report plays the node's agent reporting its containers.
func report(n *edgev1alpha1.EdgeNode, containers ...edgev1alpha1.ObservedContainer) {
	GinkgoHelper()
	info := edgev1alpha1.NodeInfo{Type: n.Spec.Type, Arch: n.Spec.Arch, AgentVersion: "test", ReadsAssignment: true}
	Expect(testenv.Report(ctx, k8sClient, n.Name, info, &bootTime, containers...)).To(Succeed())
}

func getNode(name string) *edgev1alpha1.EdgeNode {
	GinkgoHelper()
	n := &edgev1alpha1.EdgeNode{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
	return n
}

func getService(name string) *edgev1alpha1.EdgeService {
	GinkgoHelper()
	s := &edgev1alpha1.EdgeService{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: facadeNamespace, Name: name}, s)).To(Succeed())
	return s
}

// createStatic creates a static service on nodes at a path and waits for
// its instances.
func createStatic(name, path, ref string, nodes ...string) *edgev1alpha1.EdgeService {
	GinkgoHelper()
	s := &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: facadeNamespace, Name: name},
		Spec:       edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: edgev1alpha1.FolderPath(path), Image: edgev1alpha1.ImageSpec{Ref: edgev1alpha1.ImageRef(ref), Path: "registry.local/" + name}, Cmd: []string{"serve", "--port=80"}}, Nodes: nodes},
	}
	Expect(k8sClient.Create(ctx, s)).To(Succeed())
	Eventually(func() []edgev1alpha1.ServiceInstance { return instancesOf(name) }).Should(HaveLen(len(nodes)))
	return getService(name)
}

// instancesOf reads a service's instances from the nodes' assignments.
func instancesOf(name string) []edgev1alpha1.ServiceInstance {
	GinkgoHelper()
	out, err := testenv.Instances(ctx, k8sClient, facadeNamespace, name)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// running is what an agent reports for an instance running a revision.
func running(inst edgev1alpha1.ServiceInstance, rev int64, started metav1.Time) edgev1alpha1.ObservedContainer {
	return edgev1alpha1.ObservedContainer{
		Name: inst.Name, ID: "rt-" + inst.TaskID[:8], TaskID: inst.TaskID, Revision: rev,
		State: edgev1alpha1.ContainerRunning, StartedTime: &started, CreatedTime: &started,
		Image: "", ImageID: "sha256:abc", ImageArch: "arm64", RestartCount: 2,
		CPU:    &edgev1alpha1.CPUUsage{Total: 12.5, Cores: []float64{10, 15}},
		Memory: &edgev1alpha1.MemoryUsage{Limit: 512 << 20, Usage: 100 << 20, MaxUsage: 200 << 20},
		Size:   &edgev1alpha1.SizeUsage{Usage: 30 << 20, Limit: 1 << 30},
	}
}

// query builds a query string.
func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}
