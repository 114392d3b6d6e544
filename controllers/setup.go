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

// Package controllers sets up edgeplane's reconcilers, one package per
// kind: edgenode, edgeservice, provisiontemplate and nodecredentials.
package controllers

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers/edgenode"
	"github.com/edgeplane/edgeplane/controllers/edgeservice"
	"github.com/edgeplane/edgeplane/controllers/nodecredentials"
	"github.com/edgeplane/edgeplane/controllers/provisiontemplate"
	"github.com/edgeplane/edgeplane/internal/manager/index"
)

// Options are the settings of the reconcilers, set by the manager's flags.
type Options struct {
	// LeaseNamespace holds the agents' Leases, one per node.
	LeaseNamespace string
	// NodeGracePeriod is how old a Lease may be before its node is offline.
	NodeGracePeriod time.Duration
	// RescheduleGrace is how long a node may be offline before dynamic
	// instances move off it.
	RescheduleGrace time.Duration
	// DeletionTimeout bounds the wait of a deleted service for its containers.
	DeletionTimeout time.Duration
	// StatusHold is how long a service's status write that only tells of a
	// healthy rollout of a spec change may wait for the one that sees it
	// done.
	StatusHold time.Duration
	// ReconcileTimeout bounds one reconcile, so that nothing can hold a
	// worker forever.
	ReconcileTimeout time.Duration
	// Clock is the time source; nil means the real clock.
	Clock clock.PassiveClock
}

// DefaultOptions are the manager's defaults.
func DefaultOptions() Options {
	return Options{
		LeaseNamespace:   "edgeplane-node-lease",
		NodeGracePeriod:  40 * time.Second,
		RescheduleGrace:  5 * time.Minute,
		DeletionTimeout:  5 * time.Minute,
		StatusHold:       5 * time.Second,
		ReconcileTimeout: 30 * time.Second,
	}
}

// nodeCredentialsSelector selects the nodes' credentials Secrets.
var nodeCredentialsSelector = func() labels.Selector {
	req, err := labels.NewRequirement(edgev1alpha1.LabelNodeCredentials, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*req)
}()

// CacheOptions limits the cache to what the reconcilers read: Leases only
// from the lease namespace, and no managedFields anywhere.
func CacheOptions(o Options) cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&coordinationv1.Lease{}: {Namespaces: map[string]cache.Config{o.LeaseNamespace: {}}},
			// Pull Secrets alone, and the nodes' own credentials: no other
			// Secret is held in memory.
			&corev1.Secret{}: {Namespaces: map[string]cache.Config{
				o.LeaseNamespace:    {LabelSelector: nodeCredentialsSelector},
				cache.AllNamespaces: {FieldSelector: fields.OneTermEqualSelector("type", string(corev1.SecretTypeDockerConfigJson))},
			}},
		},
	}
}

// Setup registers the cache indexes and every reconciler with the manager.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	opts := controller.Options{ReconciliationTimeout: o.ReconcileTimeout}
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := (&edgenode.Reconciler{
		Client:         mgr.GetClient(),
		Recorder:       mgr.GetEventRecorder("edgenode-controller"),
		Clock:          o.Clock,
		LeaseNamespace: o.LeaseNamespace,
		GracePeriod:    o.NodeGracePeriod,
		APIReader:      mgr.GetAPIReader(),
	}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&edgeservice.Reconciler{
		Client:          mgr.GetClient(),
		Informers:       mgr.GetCache(),
		APIReader:       mgr.GetAPIReader(),
		Recorder:        mgr.GetEventRecorder("edgeservice-controller"),
		Clock:           o.Clock,
		RescheduleGrace: o.RescheduleGrace,
		DeletionTimeout: o.DeletionTimeout,
		StatusHold:      o.StatusHold,
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return err
	}
	if err := (&nodecredentials.Reconciler{
		Client:         mgr.GetClient(),
		Recorder:       mgr.GetEventRecorder("nodecredentials-controller"),
		LeaseNamespace: o.LeaseNamespace,
	}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	return (&provisiontemplate.Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("provisiontemplate-controller"),
		Clock:    o.Clock,
	}).SetupWithManager(mgr, opts)
}
