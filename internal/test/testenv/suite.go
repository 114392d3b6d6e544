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

package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/edgeplane/edgeplane/internal/manager"
)

// Aggregated is a configure function of Start: API aggregation as
// ConfigureAggregation sets it up, its files in dir; ca, when not nil,
// receives the front-proxy CA.
func Aggregated(dir string, ca **CA) func(*envtest.Environment) error {
	return func(env *envtest.Environment) error {
		c, err := ConfigureAggregation(env, dir)
		if ca != nil {
			*ca = c
		}
		return err
	}
}

// StartSuite starts the control plane of a Ginkgo suite, from its
// BeforeSuite: logs go to the ginkgo.GinkgoWriter, and the context ends and the
// control plane stops when the suite ends.
func StartSuite(configure ...func(*envtest.Environment) error) (context.Context, *envtest.Environment, *rest.Config, client.Client) {
	ginkgo.GinkgoHelper()
	logf.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel := context.WithCancel(context.Background())
	env, cfg, c, err := Start(configure...)
	if err != nil {
		cancel()
	}
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() {
		cancel()
		gomega.Expect(env.Stop()).To(gomega.Succeed())
	})
	return ctx, env, cfg, c
}

// RunManager runs a manager as cmd/manager does (internal/manager) with o
// until stop is called or ctx ends, and returns once its cache has synced
// and, when it serves the facade, the facade listens.
func RunManager(ctx context.Context, cfg *rest.Config, o manager.Options) (m *manager.Manager, stop func()) {
	ginkgo.GinkgoHelper()
	mctx, cancel := context.WithCancel(ctx)
	m, err := manager.New(mctx, cfg, o)
	if err != nil {
		cancel()
	}
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	done := make(chan struct{})
	go func() {
		defer ginkgo.GinkgoRecover()
		defer close(done)
		gomega.Expect(m.Start(mctx)).To(gomega.Succeed())
	}()
	// A spec that races two managers must race two that watch.
	gomega.Expect(m.GetCache().WaitForCacheSync(mctx)).To(gomega.BeTrue(), "the manager's cache syncs")
	if o.API.BindAddress != "" && o.API.BindAddress != "0" {
		gomega.Eventually(m.FacadeAddr).ShouldNot(gomega.BeEmpty(), "the facade listens")
	}
	return m, func() {
		cancel()
		<-done
	}
}

// RunSpecs runs a Ginkgo suite as ginkgo.RunSpecs does, with the suite's
// timeout ahead of go test's -timeout by cleanupMargin. go test's timeout
// panics without running a cleanup, leaving the suite's servers to the
// reaper; Ginkgo's interrupts the spec, reports where it was, and runs
// AfterSuite and every DeferCleanup, so the suite stops what it started.
func RunSpecs(t *testing.T, description string) bool {
	suite, reporter := ginkgo.GinkgoConfiguration()
	if deadline, ok := t.Deadline(); ok {
		left := time.Until(deadline)
		if timeout := left - min(cleanupMargin, left/5); timeout < suite.Timeout {
			suite.Timeout = timeout
		}
	}
	return ginkgo.RunSpecs(t, description, suite, reporter)
}

// Context is a run's context in a test: it ends a minute before go test's
// -timeout, so that a run waiting on its processes stops them and says
// what it waited for, where the timeout would panic without a cleanup.
func Context(t *testing.T) (context.Context, context.CancelFunc) {
	if deadline, ok := t.Deadline(); ok {
		return context.WithDeadline(context.Background(), deadline.Add(-time.Minute))
	}
	return context.WithCancel(context.Background())
}

// cleanupMargin is the time a timed-out suite keeps for its cleanup: each
// envtest server may take its stop timeout, and an engine its stop.
const cleanupMargin = 4 * time.Minute
