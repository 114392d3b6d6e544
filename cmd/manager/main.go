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

// Command manager runs the edgeplane controllers.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/controllers"
)

func main() {
	var (
		metricsAddr    string
		probeAddr      string
		leaderElection bool
		concurrency    int
		qps            float64
		burst          int
	)
	o := controllers.DefaultOptions()
	flag.StringVar(&o.LeaseNamespace, "lease-namespace", o.LeaseNamespace, "Namespace of the agents' Leases, one per EdgeNode, named after it.")
	flag.DurationVar(&o.NodeGracePeriod, "node-grace-period", o.NodeGracePeriod, "How old a node's Lease may be before the node is offline.")
	flag.DurationVar(&o.RescheduleGrace, "reschedule-grace-period", o.RescheduleGrace, "How long a node may be offline before instances of dynamic services move off it.")
	flag.DurationVar(&o.DeletionTimeout, "deletion-timeout", o.DeletionTimeout, "How long a deleted EdgeService waits for agents to remove its containers.")
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	flag.BoolVar(&leaderElection, "leader-elect", false, "Elect a leader so that only one manager reconciles at a time.")
	flag.IntVar(&concurrency, "concurrency", 4, "How many objects of one kind are reconciled at once.")
	flag.Float64Var(&qps, "kube-api-qps", 50, "Queries per second to the API server the manager may make.")
	flag.IntVar(&burst, "kube-api-burst", 100, "Burst of queries to the API server above kube-api-qps.")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(edgev1alpha1.AddToScheme(scheme))

	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = float32(qps), burst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Controller:             config.Controller{MaxConcurrentReconciles: concurrency},
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElection,
		LeaderElectionID:       "edgeplane-manager.edge.edgeplane.io",
		Cache:                  controllers.CacheOptions(o),
	})
	if err != nil {
		log.Error(err, "Unable to create manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := controllers.Setup(ctx, mgr, o); err != nil {
		log.Error(err, "Unable to set up controllers")
		os.Exit(1)
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("readyz", healthz.Ping))

	log.Info("Starting manager")
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "Manager exited with an error")
		os.Exit(1)
	}
}
