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
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The reconcilers run in a real manager against a real kube-apiserver.
// Agents are played by the tests: they renew Leases and apply EdgeNode
// status with their own field manager, as cmd/edge-agent does.

var (
	ctx       context.Context
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	opts      controllers.Options
	// stopManager stops the manager the suite runs; tests that need other
	// managers stop it and start it again.
	stopManager func()
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	testenv.RunSpecs(t, "Controllers suite")
}

var _ = BeforeSuite(func() {
	testenv.CheckLeaks()
	ctx, testEnv, cfg, k8sClient = testenv.StartSuite()
	opts = controllers.DefaultOptions()
	opts.NodeGracePeriod = 2 * time.Second
	opts.RescheduleGrace = 3 * time.Second
	opts.DeletionTimeout = 4 * time.Second
	// Held, as by default, but briefly: most specs follow a rollout step
	// by step. The hold's own spec runs the default.
	opts.StatusHold = 500 * time.Millisecond
	// ReconcileTimeout stays the product's (30 s): on a busy machine a
	// reconcile of the largest service (10,000 instances) outlasts 10 s.
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.LeaseNamespace}})).To(Succeed())
	stopManager = startManager(nil)
})

var _ = AfterSuite(func() {
	if stopManager != nil {
		stopManager()
	}
})

// startManager runs a manager with every reconciler until the returned
// function is called. wrap, when set, wraps the manager's transport, which
// every client of the manager goes through.
func startManager(wrap func(http.RoundTripper) http.RoundTripper) func() {
	GinkgoHelper()
	return startManagerWith(opts, wrap)
}

// startManagerWith is startManager with options of the test's own.
func startManagerWith(opts controllers.Options, wrap func(http.RoundTripper) http.RoundTripper) func() {
	GinkgoHelper()
	mo := manager.ForTest(opts)
	mo.API.BindAddress = "0"
	// Several managers run in one process over the suite's life.
	mo.SkipNameValidation = true
	mcfg := rest.CopyConfig(cfg)
	mcfg.WrapTransport = wrap
	m, stop := testenv.RunManager(ctx, mcfg, mo)
	// Placement reads every node from this informer's store; without a
	// store it falls back to a List that copies every node.
	inf, err := m.GetCache().GetInformer(ctx, &edgev1alpha1.EdgeNode{})
	Expect(err).NotTo(HaveOccurred())
	_, hasStore := inf.(interface{ GetStore() toolscache.Store })
	Expect(hasStore).To(BeTrue(), "the manager's EdgeNode informer has no store to read")
	return stop
}
