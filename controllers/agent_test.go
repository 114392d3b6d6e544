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

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// agentFieldOwner is the field manager the tests write agent fields with.
const agentFieldOwner = testenv.AgentFieldOwner

// createNode creates an EdgeNode of an OS type with labels.
func createNode(name, osType string, labels map[string]string) *edgev1alpha1.EdgeNode {
	GinkgoHelper()
	n := &edgev1alpha1.EdgeNode{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       edgev1alpha1.EdgeNodeSpec{Address: "10.1.0.1:7200", Type: osType, Arch: "amd64"},
	}
	Expect(k8sClient.Create(ctx, n)).To(Succeed())
	return n
}

// renewLease renews the node's Lease as its agent would, creating it first.
func renewLease(node string) {
	GinkgoHelper()
	Expect(testenv.RenewLease(ctx, k8sClient, opts.LeaseNamespace, node)).To(Succeed())
}

// keepAlive renews the node's Lease every 300 ms until the spec ends or
// the returned function is called.
func keepAlive(node string) (stopRenewing func()) {
	renewLease(node)
	stop, exited := make(chan struct{}), make(chan struct{})
	var once sync.Once
	// Stopping waits for a renewal in flight, so none outlives the spec.
	stopRenewing = func() { once.Do(func() { close(stop) }); <-exited }
	DeferCleanup(stopRenewing)
	go func() {
		defer close(exited)
		defer GinkgoRecover()
		t := time.NewTicker(300 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				renewLease(node)
			}
		}
	}()
	return stopRenewing
}

// report applies the agent's half of a node's status: its OS and containers.
func report(node, osType string, containers ...edgev1alpha1.ObservedContainer) {
	GinkgoHelper()
	info := edgev1alpha1.NodeInfo{Type: osType, Arch: "amd64", AgentVersion: "test", ReadsAssignment: true}
	Expect(testenv.Report(ctx, k8sClient, node, info, nil, containers...)).To(Succeed())
}

// running is a container the agent reports running at a revision.
func running(inst edgev1alpha1.ServiceInstance, rev int64) edgev1alpha1.ObservedContainer {
	return edgev1alpha1.ObservedContainer{
		Name: inst.Name, ID: "rt-" + inst.TaskID[:8], TaskID: inst.TaskID, Revision: rev,
		State: edgev1alpha1.ContainerRunning, StartedTime: ptr.To(metav1.Now()),
	}
}

func getNode(name string) *edgev1alpha1.EdgeNode {
	GinkgoHelper()
	n := &edgev1alpha1.EdgeNode{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Name: name}, n)).To(Succeed())
	return n
}

func getService(ns, name string) *edgev1alpha1.EdgeService {
	GinkgoHelper()
	s := &edgev1alpha1.EdgeService{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

// instancesOf reads a service's instances from the nodes' assignments,
// with the deployment status each node's report gives them.
func instancesOf(ns, name string) []edgev1alpha1.ServiceInstance {
	GinkgoHelper()
	out, err := testenv.Instances(ctx, k8sClient, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// assignment reads a node's assignment from the API server; an empty one
// while there is none.
func assignment(node string) *edgev1alpha1.NodeAssignment {
	GinkgoHelper()
	a := &edgev1alpha1.NodeAssignment{}
	if err := k8sClient.Get(ctx, types.NamespacedName{Name: node}, a); err != nil {
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		a.Name = node
	}
	return a
}

// records lists a service's DeployRecords from the API server, by revision.
func records(ns, service string) []edgev1alpha1.DeployRecord {
	GinkgoHelper()
	list := &edgev1alpha1.DeployRecordList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var out []edgev1alpha1.DeployRecord
	for _, r := range list.Items {
		if r.Spec.ServiceName == service {
			out = append(out, r)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Spec.Revision < out[j-1].Spec.Revision; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// leaseOf is the Lease of a node, for deleting it.
func leaseOf(node string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: opts.LeaseNamespace}}
}

// eventReasons lists the reasons of the Events about an object.
func eventReasons(ns, regarding string) []string {
	list := &eventsv1.EventList{}
	_ = k8sClient.List(ctx, list, client.InNamespace(ns))
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == regarding {
			out = append(out, e.Reason)
		}
	}
	return out
}
