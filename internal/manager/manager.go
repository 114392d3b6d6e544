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

// Package manager is the one way to start edgeplane's manager: the
// reconcilers and the /api/v1 facade beside them. cmd/manager runs it
// from its flags; the suites run it with options of their own, so that
// they test what ships.
package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/hub"
	"github.com/edgeplane/edgeplane/internal/manager/index"
	"github.com/edgeplane/edgeplane/internal/shared/scheme"
)

// electionID names the leader election Lease.
const electionID = "edgeplane-manager.edge.edgeplane.io"

// Manager is controller-runtime's manager with the reconcilers set up,
// and the facade that runs beside it.
type Manager struct {
	ctrl.Manager
	facade *apiserver.Server
	hub    *hub.Hub
}

// New sets up a manager on cfg; ctx bounds the set-up's own calls and
// the controllers' background work.
func New(ctx context.Context, cfg *rest.Config, o Options) (*Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(o.QPS), o.Burst
	var lock resourcelock.Interface
	events := &lazyEvents{}
	if o.LeaderElection && o.RunControllers {
		var err error
		if lock, err = leaseLock(cfg, o.ElectionNamespace, electionID, o, events); err != nil {
			return nil, fmt.Errorf("leader election: %w", err)
		}
	}
	copts := ctrlconfig.Controller{MaxConcurrentReconciles: o.Concurrency}
	if o.SkipNameValidation {
		copts.SkipNameValidation = &o.SkipNameValidation
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.Scheme,
		Metrics:                 metricsOptions(o.MetricsAddr, o.MetricsSecure, o.MetricsCertDir),
		HealthProbeBindAddress:  o.ProbeAddr,
		PprofBindAddress:        o.PprofAddr,
		LeaderElection:          o.LeaderElection && o.RunControllers,
		LeaderElectionID:        electionID,
		LeaderElectionNamespace: o.ElectionNamespace,
		// The Lease lock, held off from taking over a dead leader's lease
		// while a standby can (leaderelection.go).
		LeaderElectionResourceLockInterface: lock,
		LeaseDuration:                       &o.LeaseDuration,
		RenewDeadline:                       &o.RenewDeadline,
		RetryPeriod:                         &o.RetryPeriod,
		// A replica that stops hands over at once rather than after the
		// lease expires; safe because Start returns only once every
		// reconciler has stopped.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOptions(o),
		Controller:                    copts,
		// Skip kube-apiserver's strict decode of every object the
		// manager writes: it writes only fields of its own types, which
		// the CRDs of its release define, and the strict decode (a
		// duplicate-key check over the whole patched object) was about
		// 1.5 % of kube-apiserver's CPU in a rollout (ADR 0032).
		Client:    client.Options{FieldValidation: metav1.FieldValidationIgnore},
		NewClient: o.NewClient,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	m := &Manager{Manager: mgr}
	if lock != nil {
		events.set(mgr.GetEventRecorderFor(lock.Identity()))
	}
	if o.RunControllers {
		if err := controllers.Setup(ctx, mgr, o.Controllers); err != nil {
			return nil, fmt.Errorf("setting up the controllers: %w", err)
		}
	} else if o.facade() {
		// The facade's indexes, and their informers: a hub alone may
		// list none of EdgeServices, DeployRecords and ProvisionTemplates
		// (config/hub), and its cache would never sync.
		if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
			return nil, err
		}
	}
	if o.facade() {
		if m.facade, err = apiserver.New(mgr, o.API); err != nil {
			return nil, err
		}
	}
	if o.Hub.Enabled() {
		o.Hub.FullNodes = o.RunControllers || o.facade()
		if m.hub, err = hub.New(ctx, mgr, o.Hub); err != nil {
			return nil, fmt.Errorf("setting up the hub: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("informers", func(*http.Request) error { return cacheSynced(mgr) }); err != nil {
		return nil, err
	}
	if m.facade != nil {
		if err := mgr.AddReadyzCheck("facade", facadeSynced(m.facade.Synced)); err != nil {
			return nil, err
		}
	}
	if o.RunControllers || o.facade() {
		// In default, where the facade's services live and the manager
		// may create them.
		if err := mgr.AddReadyzCheck("admission", admitsServices(dryRunService(mgr.GetClient(), "default"))); err != nil {
			return nil, err
		}
	}
	if o.RunControllers {
		if err := mgr.AddReadyzCheck("leader-caught-up", leaderCaughtUp(cachedServices(mgr), clock.RealClock{})); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Run sets up a manager and runs it until ctx is done.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	m, err := New(ctx, cfg, o)
	if err != nil {
		return err
	}
	return m.Start(ctx)
}

// Start runs the manager and the facade until ctx is done or either
// fails, which stops the other.
//
// The facade runs beside the manager rather than in it: the manager
// starts its runnables only once the cache has synced, and the facade's
// discovery must answer kube-apiserver's aggregation layer from the first
// second (its routes answer 503 until the sync).
func (m *Manager) Start(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	if m.facade != nil {
		g.Go(func() error { return m.facade.Start(gctx) })
	}
	g.Go(func() error { return startManager(gctx, m.Manager) })
	return g.Wait()
}

// Facade is the facade the manager serves; nil without one.
func (m *Manager) Facade() *apiserver.Server { return m.facade }

// Hub is the edge hub the manager serves; nil without one.
func (m *Manager) Hub() *hub.Hub { return m.hub }

// FacadeAddr is the address the facade listens on once it has started;
// empty before, or without a facade.
func (m *Manager) FacadeAddr() string {
	if m.facade == nil {
		return ""
	}
	return m.facade.Addr()
}

// unsyncedStopGrace is how long a manager stopped before its cache synced
// is waited for.
const unsyncedStopGrace = 10 * time.Second

// startManager runs mgr until ctx ends. controller-runtime's manager does
// not return when it is stopped before its cache has synced (its start
// waits for a sync that can no longer come): such a manager is left
// behind after a grace, so that the facade's shutdown and the process's
// exit do not wait on it.
func startManager(ctx context.Context, mgr ctrl.Manager) error {
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	if cacheSynced(mgr) == nil {
		return <-done
	}
	select {
	case err := <-done:
		return err
	case <-time.After(unsyncedStopGrace):
		ctrl.Log.WithName("setup").Info("Stopped before the cache synced; not waiting for the manager", "waited", unsyncedStopGrace)
		return nil
	}
}

// cachedServices lists the services from the cache once it has synced,
// without copying them: the readiness check only reads them.
func cachedServices(mgr ctrl.Manager) func(context.Context) ([]edgev1alpha1.EdgeService, error) {
	return func(ctx context.Context) ([]edgev1alpha1.EdgeService, error) {
		if err := cacheSynced(mgr); err != nil {
			return nil, err
		}
		l := &edgev1alpha1.EdgeServiceList{}
		if err := mgr.GetClient().List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		return l.Items, nil
	}
}

// cacheOptions are the controllers' (controllers.CacheOptions); a replica
// without them (the facade alone, the hub alone) holds no pull Secrets of
// any namespace, only the nodes' own credentials, which the hub serves.
func cacheOptions(o Options) cache.Options {
	c := controllers.CacheOptions(o.Controllers)
	if !o.RunControllers {
		for obj, by := range c.ByObject {
			if _, ok := obj.(*corev1.Secret); ok {
				delete(by.Namespaces, cache.AllNamespaces)
			}
		}
	}
	return c
}

// metricsOptions serve metrics as kubebuilder's scaffold does: over HTTPS
// behind controller-runtime's authentication and authorization filter,
// unless told otherwise.
func metricsOptions(addr string, secure bool, certDir string) metricsserver.Options {
	o := metricsserver.Options{BindAddress: addr, SecureServing: secure}
	if secure {
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
		if certDir != "" {
			o.CertDir, o.CertName, o.KeyName = certDir, "tls.crt", "tls.key"
		}
	}
	return o
}

// cacheSynced is the readiness of the manager: ready once its informer
// cache has synced.
func cacheSynced(mgr ctrl.Manager) error {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("the informer cache has not synced yet")
	}
	return nil
}
