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

// Package hub_test proves the edge hub against a real API server: devices
// join with node-bound single-use tokens, reach only their own objects,
// beat without a write per beat, and are cut off when revoked.
package hub_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/agent"
	"github.com/edgeplane/edgeplane/internal/agent/hubconn"
	"github.com/edgeplane/edgeplane/internal/agent/sim"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

const (
	hubNamespace   = "edgeplane-system"
	leaseNamespace = "edgeplane-node-lease"
	grace          = 4 * time.Second
)

var (
	ctx      context.Context
	cfg      *rest.Config
	c        client.Client
	proxy    *testenv.Proxy
	stopHubA func()
	hubURL   string
	caHash   string
)

func TestHub(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	testenv.RunSpecs(t, "Edge hub suite")
}

var _ = BeforeSuite(func() {
	ctx, _, cfg, c = testenv.StartSuite()
	for _, ns := range []string{hubNamespace, leaseNamespace} {
		Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	co := controllers.DefaultOptions()
	co.NodeGracePeriod = grace
	o := manager.ForTest(co)
	o.API.BindAddress = "0"
	testenv.RunManager(ctx, cfg, o)
	// Devices reach the hub replicas through a proxy, as through a
	// Service: a spec moves it to another replica.
	var err error
	proxy, err = testenv.StartProxy("127.0.0.1:1")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(proxy.Close)
	hubURL = "https://" + proxy.Addr()
	var addr string
	addr, stopHubA = startHub("hub-a")
	proxy.SetTarget(addr)

	info := &corev1.ConfigMap{}
	Eventually(func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: hubapi.InfoConfigMap}, info)
	}).Should(Succeed(), "the hub publishes how devices reach it")
	Expect(info.Data[hubapi.InfoServer]).To(Equal(hubURL))
	block, _ := pem.Decode([]byte(info.Data[hubapi.InfoCACert]))
	Expect(block).NotTo(BeNil())
	ca, err := x509.ParseCertificate(block.Bytes)
	Expect(err).NotTo(HaveOccurred())
	caHash = hubapi.CAHash(ca)
})

// startHub runs a hub replica alone (manager --controllers=false
// --hub-bind-address), and returns its address and how to stop it.
func startHub(identity string) (string, func()) {
	GinkgoHelper()
	o := manager.ForTest(controllers.Options{LeaseNamespace: leaseNamespace, NodeGracePeriod: grace})
	o.RunControllers, o.API.BindAddress = false, "0"
	addr, err := testenv.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	o.Hub.BindAddress, o.Hub.AdvertiseURL, o.Hub.RenewInterval, o.Hub.Identity = addr, hubURL, time.Second, identity
	m, stop := testenv.RunManager(ctx, cfg, o)
	Eventually(m.Hub().Addr).ShouldNot(BeEmpty(), "hub replica %s listens", identity)
	return addr, stop
}

// addNode creates an EdgeNode and a join token for it valid for ttl, as
// kubectl edge node add does, and returns the token.
func addNode(name string, ttl time.Duration) string {
	GinkgoHelper()
	n := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: edgev1alpha1.EdgeNodeSpec{Address: "10.1.0.1:7200", Type: "linux", Arch: "amd64"}}
	Expect(c.Create(ctx, n)).To(Succeed())
	return newToken(name, ttl)
}

// newToken stores a new join token for node.
func newToken(node string, ttl time.Duration) string {
	GinkgoHelper()
	t, err := hubapi.NewToken()
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Create(ctx, hubapi.JoinSecret(t, hubNamespace, node, time.Now().Add(ttl)))).To(Succeed())
	return t.String()
}

// join joins a device holding token into a directory of its own.
func join(token, node string) (*hubconn.Identity, string, error) {
	GinkgoHelper()
	dir := filepath.Join(GinkgoT().TempDir(), "hub")
	id, err := hubconn.Join(ctx, hubconn.JoinOptions{Hub: hubURL, Token: token, CAHash: caHash, Node: node, Dir: dir})
	return id, dir, err
}

// runAgent runs a simulated device's agent through the hub until the
// returned stop is called.
func runAgent(id *hubconn.Identity) (stop func()) {
	GinkgoHelper()
	rc, err := id.RESTConfig()
	Expect(err).NotTo(HaveOccurred())
	o := agentOptions([]agent.Node{{Name: id.Node, Type: "linux", Arch: "amd64", Address: "10.1.0.1:7200"}})
	o.LeaseNamespace = id.LeaseNamespace
	return runAgentWith(rc, o)
}

// agentOptions are a simulated agent's options for nodes.
func agentOptions(nodes []agent.Node) agent.Options {
	o := agent.DefaultOptions()
	o.Log = logf.Log.WithName("agent")
	o.RenewInterval, o.LeaseDuration, o.Tick, o.MetricsInterval = 500*time.Millisecond, grace, 100*time.Millisecond, time.Second
	o.Nodes = nodes
	o.NewRuntime = sim.Runtimes(sim.DefaultOptions())
	return o
}

// runAgentWith runs an agent on rc with o until stop is called.
func runAgentWith(rc *rest.Config, o agent.Options) (stop func()) {
	actx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer GinkgoRecover()
		Expect(agent.Run(actx, rc, o)).To(Succeed())
	}()
	return func() { cancel(); <-done }
}

// nodeState is the node's state and Ready reason.
func nodeState(name string) func() []string {
	return func() []string {
		n := &edgev1alpha1.EdgeNode{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			return []string{err.Error()}
		}
		reason := ""
		for _, cond := range n.Status.Conditions {
			if cond.Type == edgev1alpha1.ConditionReady {
				reason = cond.Reason
			}
		}
		return []string{string(n.Status.Status), reason}
	}
}

// events are the reasons of the Events about node.
func events(node string) func() []string {
	return func() []string {
		list := &eventsv1.EventList{}
		if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
			return nil
		}
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Name == node && e.Regarding.Kind == "EdgeNode" {
				out = append(out, e.Reason)
			}
		}
		return out
	}
}
