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

// Command manager runs the edgeplane controllers and the /api/v1 facade.
// With --controllers=false it is a read replica of the facade: no leader
// election, any number of copies.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"
	_ "time/tzdata" // --time-zone works without the host's zoneinfo

	"golang.org/x/sync/errgroup"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/index"
	"github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/version"
)

func init() { metrics.Registry.MustRegister(version.BuildInfo()) }

func main() {
	ctx := ctrl.SetupSignalHandler()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

// run parses the flags and runs the manager until ctx is done.
func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	var (
		metricsAddr, probeAddr, timeZone string
		leaderElection, runControllers   bool
		showVersion, metricsSecure       bool
		metricsCertDir, electionNS       string
		pprofAddr                        string
		concurrency, burst, minProcs     int
		qps                              float64
		leaseDuration, renewDeadline     time.Duration
		retryPeriod                      time.Duration
	)
	o := controllers.DefaultOptions()
	api := apiserver.DefaultOptions()
	fs.StringVar(&o.LeaseNamespace, "lease-namespace", o.LeaseNamespace, "Namespace of the agents' Leases, one per EdgeNode, named after it.")
	fs.DurationVar(&o.NodeGracePeriod, "node-grace-period", o.NodeGracePeriod, "How old a node's Lease may be before the node is offline.")
	fs.DurationVar(&o.RescheduleGrace, "reschedule-grace-period", o.RescheduleGrace, "How long a node may be offline before instances of dynamic services move off it.")
	fs.DurationVar(&o.DeletionTimeout, "deletion-timeout", o.DeletionTimeout, "How long a deleted EdgeService waits for agents to remove its containers.")
	fs.DurationVar(&o.ReconcileTimeout, "reconcile-timeout", o.ReconcileTimeout, "The longest one reconcile may run; past it, its calls are cancelled and it is retried with back-off.")
	fs.BoolVar(&runControllers, "controllers", true, "Run the reconcilers. false runs the facade alone, as a read replica.")
	fs.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	fs.BoolVar(&metricsSecure, "metrics-secure", true, "Serve metrics over HTTPS to callers that authenticate (TokenReview) and may get the /metrics URL (SubjectAccessReview); false serves plain HTTP to anyone who can connect.")
	fs.StringVar(&metricsCertDir, "metrics-cert-dir", "", "Directory holding tls.crt and tls.key of the metrics endpoint, reloaded when they change; empty means a self-signed certificate.")
	fs.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	fs.StringVar(&pprofAddr, "pprof-bind-address", "", "Address Go's /debug/pprof profiles bind to, unauthenticated: bind it to localhost. Empty disables it.")
	fs.BoolVar(&leaderElection, "leader-elect", false, "Elect a leader so that only one manager reconciles at a time.")
	fs.DurationVar(&leaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a standby waits after the leader's last renewal before it takes over; a leader killed without releasing is replaced after this long.")
	fs.DurationVar(&renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew before it gives up leading; less than the lease duration.")
	fs.DurationVar(&retryPeriod, "leader-elect-retry-period", 2*time.Second, "How often replicas try to acquire or renew the lease.")
	fs.StringVar(&electionNS, "leader-election-namespace", "", "Namespace of the leader election Lease; empty means the manager's own namespace when it runs in a pod.")
	fs.IntVar(&concurrency, "concurrency", 4, "How many objects of one kind are reconciled at once.")
	fs.IntVar(&minProcs, "min-procs", 4, "Run at least this many Go processors (GOMAXPROCS) when Go would use every CPU and they are fewer: on a machine of few cores, facade requests otherwise wait up to Go's 10 ms preemption behind busy reconcilers. Left alone under a CPU limit or a GOMAXPROCS variable; 0 disables it.")
	fs.Float64Var(&qps, "kube-api-qps", 50, "Queries per second to the API server the manager may make.")
	fs.IntVar(&burst, "kube-api-burst", 100, "Burst of queries to the API server above kube-api-qps.")
	fs.StringVar(&api.BindAddress, "api-bind-address", api.BindAddress, "Address the /api/v1 facade binds to; 0 disables it.")
	fs.StringVar(&api.Namespace, "api-namespace", api.Namespace, "Namespace of the EdgeServices, DeployRecords and ProvisionTemplates the facade serves.")
	fs.StringVar(&api.Auth, "auth", api.Auth, "Authentication of the facade: none, or kubernetes (bearer tokens, TokenReview and SubjectAccessReview).")
	fs.DurationVar(&api.AuthCacheTTL, "auth-cache-ttl", api.AuthCacheTTL, "How long the facade reuses an authentication or authorization decision.")
	fs.BoolVar(&api.Console, "console", api.Console, "Serve the web console at /console/ of the facade (and under the aggregated prefix); its files are public, the data it shows is authorized call by call.")
	fs.Func("cors-allowed-origins", "Comma-separated web origins (https://console.example.com) whose pages may call the facade: preflight requests are answered and CORS headers set for them only. None by default.", func(v string) error {
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				api.CORSAllowedOrigins = append(api.CORSAllowedOrigins, o)
			}
		}
		return nil
	})
	fs.DurationVar(&api.AuthStaleTTL, "auth-stale-ttl", api.AuthStaleTTL, "How long past --auth-cache-ttl the facade still reuses a decision while the API server cannot be reached; 0 refuses instead.")
	fs.StringVar(&api.TLSCertFile, "tls-cert-file", "", "Certificate of the facade; with --tls-private-key-file it serves HTTPS, reloading both when they change.")
	fs.Func("api-audiences", "Comma-separated audiences a facade bearer token must be valid for (TokenReview); empty means the API server's own. A dedicated audience keeps facade tokens from working against the API server.", func(v string) error {
		api.Audiences = nil
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				api.Audiences = append(api.Audiences, a)
			}
		}
		return nil
	})
	fs.BoolVar(&api.InsecureAuthOverHTTP, "insecure-auth-over-http", false, "Let --auth=kubernetes serve plain HTTP, sending bearer tokens in clear text. Without it, --auth=kubernetes needs a TLS certificate.")
	fs.StringVar(&api.TLSKeyFile, "tls-private-key-file", "", "Private key of the facade's certificate.")
	fs.StringVar(&api.APIService, "apiservice", "", "APIService (such as "+apiserver.AggregatedAPIService+") whose caBundle the facade keeps set to the CA of its certificate: ca.crt beside --tls-cert-file, else the certificate chain's last certificate. Empty leaves APIServices alone.")
	fs.StringVar(&timeZone, "time-zone", "UTC", "Time zone of the facade's yyyy-MM-dd HH:mm:ss times, as an IANA name.")
	fs.BoolVar(&showVersion, "version", false, "Print the version and exit.")
	config.RegisterFlags(fs)
	zopts := zap.Options{}
	zopts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if showVersion {
		fmt.Println(version.String("manager"))
		return nil
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
	klog.SetLogger(ctrl.Log) // k8s.io/apiserver's front-proxy controllers log through klog
	log := ctrl.Log.WithName("setup")
	if n, was := goMaxProcs(runtime.GOMAXPROCS(0), runtime.NumCPU(), minProcs, os.Getenv("GOMAXPROCS") != ""), runtime.GOMAXPROCS(0); n != was {
		runtime.GOMAXPROCS(n)
		log.Info("Raised GOMAXPROCS above the CPU count", "gomaxprocs", n, "cpus", runtime.NumCPU())
	}

	loc, err := time.LoadLocation(timeZone)
	if err != nil {
		return fmt.Errorf("--time-zone: %w", err)
	}
	api.Location = loc
	facade := api.BindAddress != "" && api.BindAddress != "0"
	if facade {
		if err := api.Validate(); err != nil {
			return fmt.Errorf("facade flags: %w", err)
		}
	}
	if !runControllers && !facade {
		return errors.New("with --controllers=false the facade is all there is: set --api-bind-address")
	}
	if leaderElection && (renewDeadline >= leaseDuration || retryPeriod >= renewDeadline) {
		return fmt.Errorf("leader election needs --leader-elect-retry-period (%s) < --leader-elect-renew-deadline (%s) < --leader-elect-lease-duration (%s)", retryPeriod, renewDeadline, leaseDuration)
	}

	cfg, err := config.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.Scheme,
		Metrics:                 metricsOptions(metricsAddr, metricsSecure, metricsCertDir),
		HealthProbeBindAddress:  probeAddr,
		PprofBindAddress:        pprofAddr,
		LeaderElection:          leaderElection && runControllers,
		LeaderElectionID:        "edgeplane-manager.edge.edgeplane.io",
		LeaderElectionNamespace: electionNS,
		LeaseDuration:           &leaseDuration,
		RenewDeadline:           &renewDeadline,
		RetryPeriod:             &retryPeriod,
		// A replica that stops hands over at once rather than after the
		// lease expires; safe because Start returns only once every
		// reconciler has stopped.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         controllers.CacheOptions(o),
		Controller:                    ctrlconfig.Controller{MaxConcurrentReconciles: concurrency},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if runControllers {
		if err := controllers.Setup(ctx, mgr, o); err != nil {
			return fmt.Errorf("setting up the controllers: %w", err)
		}
	} else if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	var srv *apiserver.Server
	if facade {
		if srv, err = apiserver.New(mgr, api); err != nil {
			return err
		}
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("informers", func(*http.Request) error { return cacheSynced(mgr) }))

	log.Info("Starting manager", "version", version.Version(), "controllers", runControllers, "facade", api.BindAddress)
	// The facade runs beside the manager rather than in it: the manager
	// starts its runnables only once the cache has synced, and the
	// facade's discovery must answer kube-apiserver's aggregation layer
	// from the first second (its routes answer 503 until the sync). Either
	// one failing stops the other.
	g, gctx := errgroup.WithContext(ctx)
	if srv != nil {
		g.Go(func() error { return srv.Start(gctx) })
	}
	g.Go(func() error { return startManager(gctx, mgr) })
	return g.Wait()
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
