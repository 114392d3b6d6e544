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

package manager

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/apiserver"
	"github.com/edgeplane/edgeplane/controllers"
	"github.com/edgeplane/edgeplane/internal/hub"
)

// Options configure a manager: the reconcilers, the facade and the
// process's servers around them. cmd/manager fills them from its flags;
// suites fill them in code.
type Options struct {
	Controllers controllers.Options
	API         apiserver.Options
	// Hub serves edge devices when its BindAddress is set; its lease
	// namespace and grace period are the controllers'.
	Hub hub.Options
	// RunControllers false runs the facade alone, as a read replica.
	RunControllers bool
	// TimeZone names the facade's time zone (IANA); it sets API.Location
	// unless empty.
	TimeZone string

	MetricsAddr    string
	MetricsSecure  bool
	MetricsCertDir string
	ProbeAddr      string
	PprofAddr      string

	LeaderElection    bool
	ElectionNamespace string
	LeaseDuration     time.Duration
	RenewDeadline     time.Duration
	RetryPeriod       time.Duration

	Concurrency int
	QPS         float64
	Burst       int

	// For suites only: several managers in one process register
	// controllers of the same names, and a suite may watch the manager's
	// client.
	SkipNameValidation bool
	NewClient          client.NewClientFunc
}

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	return Options{
		Controllers:    controllers.DefaultOptions(),
		API:            apiserver.DefaultOptions(),
		Hub:            hub.DefaultOptions(),
		RunControllers: true,
		TimeZone:       "UTC",
		MetricsAddr:    ":8443",
		MetricsSecure:  true,
		ProbeAddr:      ":8081",
		LeaseDuration:  15 * time.Second,
		RenewDeadline:  10 * time.Second,
		RetryPeriod:    2 * time.Second,
		Concurrency:    4,
		QPS:            50,
		Burst:          100,
	}
}

// ForTest are options for a suite's manager: every server on a free
// loopback port or off, no leader election, the facade served without
// auth, in UTC (API.Location).
func ForTest(o controllers.Options) Options {
	m := DefaultOptions()
	m.Controllers, m.TimeZone = o, ""
	m.MetricsAddr, m.MetricsSecure, m.ProbeAddr = "0", false, "0"
	m.API.BindAddress = "127.0.0.1:0"
	return m
}

// facade reports whether the options serve the facade.
func (o Options) facade() bool { return o.API.BindAddress != "" && o.API.BindAddress != "0" }

// Validate refuses options the manager cannot run with, and resolves the
// time zone.
func (o *Options) Validate() error {
	if o.TimeZone != "" {
		loc, err := time.LoadLocation(o.TimeZone)
		if err != nil {
			return fmt.Errorf("--time-zone: %w", err)
		}
		o.API.Location = loc
	}
	if o.facade() {
		if err := o.API.Validate(); err != nil {
			return fmt.Errorf("facade flags: %w", err)
		}
	}
	// The facade's node routes write join tokens where the hub reads them.
	o.API.HubNamespace = o.Hub.Namespace
	if o.Hub.Enabled() {
		o.Hub.LeaseNamespace, o.Hub.GracePeriod = o.Controllers.LeaseNamespace, o.Controllers.NodeGracePeriod
		if err := o.Hub.Validate(); err != nil {
			return fmt.Errorf("hub flags: %w", err)
		}
	}
	if !o.RunControllers && !o.facade() && !o.Hub.Enabled() {
		return errors.New("with --controllers=false the facade or the hub is all there is: set --api-bind-address or --hub-bind-address")
	}
	if o.LeaderElection && (o.RenewDeadline >= o.LeaseDuration || o.RetryPeriod >= o.RenewDeadline) {
		return fmt.Errorf("leader election needs --leader-elect-retry-period (%s) < --leader-elect-renew-deadline (%s) < --leader-elect-lease-duration (%s)", o.RetryPeriod, o.RenewDeadline, o.LeaseDuration)
	}
	return nil
}

// AddFlags binds the options to the manager's command-line flags.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	c, api := &o.Controllers, &o.API
	fs.StringVar(&c.LeaseNamespace, "lease-namespace", c.LeaseNamespace, "Namespace of the agents' Leases, one per EdgeNode, named after it.")
	fs.DurationVar(&c.NodeGracePeriod, "node-grace-period", c.NodeGracePeriod, "How old a node's Lease may be before the node is offline.")
	fs.DurationVar(&c.RescheduleGrace, "reschedule-grace-period", c.RescheduleGrace, "How long a node may be offline before instances of dynamic services move off it.")
	fs.DurationVar(&c.DeletionTimeout, "deletion-timeout", c.DeletionTimeout, "How long a deleted EdgeService waits for agents to remove its containers.")
	fs.DurationVar(&c.StatusHold, "status-hold", c.StatusHold, "How long an EdgeService's status write that only tells of a healthy rollout of a spec change under way may wait for the write that sees it done, so that a quick rollout costs one status write; a new service's first status, failures, problems and a rollout's end are written at once. 0 writes every step.")
	fs.DurationVar(&c.ReconcileTimeout, "reconcile-timeout", c.ReconcileTimeout, "The longest one reconcile may run; past it, its calls are cancelled and it is retried with back-off.")
	fs.BoolVar(&o.RunControllers, "controllers", o.RunControllers, "Run the reconcilers. false runs the facade alone, as a read replica.")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "Serve metrics over HTTPS to callers that authenticate (TokenReview) and may get the /metrics URL (SubjectAccessReview); false serves plain HTTP to anyone who can connect.")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", o.MetricsCertDir, "Directory holding tls.crt and tls.key of the metrics endpoint, reloaded when they change; empty means a self-signed certificate.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "Address the /healthz and /readyz probes bind to.")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", o.PprofAddr, "Address Go's /debug/pprof profiles bind to, unauthenticated: bind it to localhost. Empty disables it.")
	fs.BoolVar(&o.LeaderElection, "leader-elect", o.LeaderElection, "Elect a leader so that only one manager reconciles at a time.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long a standby waits after the leader's last renewal before it takes over; a leader killed without releasing is replaced after this long.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader keeps trying to renew before it gives up leading; less than the lease duration.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "How often replicas try to acquire or renew the lease.")
	fs.StringVar(&o.ElectionNamespace, "leader-election-namespace", o.ElectionNamespace, "Namespace of the leader election Lease; empty means the manager's own namespace when it runs in a pod.")
	fs.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "How many objects of one kind are reconciled at once.")
	fs.Float64Var(&o.QPS, "kube-api-qps", o.QPS, "Queries per second to the API server the manager may make.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Burst of queries to the API server above kube-api-qps.")
	fs.StringVar(&api.BindAddress, "api-bind-address", api.BindAddress, "Address the /api/v1 facade binds to; 0 disables it.")
	fs.StringVar(&api.Namespace, "api-namespace", api.Namespace, "Namespace of the EdgeServices, DeployRecords and ProvisionTemplates the facade serves.")
	fs.StringVar(&api.Auth, "auth", api.Auth, "Authentication of the facade: none, or kubernetes (bearer tokens, TokenReview and SubjectAccessReview).")
	fs.DurationVar(&api.AuthCacheTTL, "auth-cache-ttl", api.AuthCacheTTL, "How long the facade reuses an authentication or authorization decision.")
	fs.BoolVar(&api.Console, "console", api.Console, "Serve the web console at /console/ of the facade (and under the aggregated prefix); its files are public, the data it shows is authorized call by call.")
	fs.Func("cors-allowed-origins", "Comma-separated web origins (https://console.example.com) whose pages may call the facade: preflight requests are answered and CORS headers set for them only. None by default.", func(v string) error {
		api.CORSAllowedOrigins = append(api.CORSAllowedOrigins, splitList(v)...)
		return nil
	})
	fs.DurationVar(&api.AuthStaleTTL, "auth-stale-ttl", api.AuthStaleTTL, "How long past --auth-cache-ttl the facade still reuses a decision while the API server cannot be reached; 0 refuses instead.")
	fs.StringVar(&api.TLSCertFile, "tls-cert-file", api.TLSCertFile, "Certificate of the facade; with --tls-private-key-file it serves HTTPS, reloading both when they change.")
	fs.Func("api-audiences", "Comma-separated audiences a facade bearer token must be valid for (TokenReview); empty means the API server's own. A dedicated audience keeps facade tokens from working against the API server.", func(v string) error {
		api.Audiences = splitList(v)
		return nil
	})
	fs.BoolVar(&api.InsecureAuthOverHTTP, "insecure-auth-over-http", api.InsecureAuthOverHTTP, "Let --auth=kubernetes serve plain HTTP, sending bearer tokens in clear text. Without it, --auth=kubernetes needs a TLS certificate.")
	fs.StringVar(&api.TLSKeyFile, "tls-private-key-file", api.TLSKeyFile, "Private key of the facade's certificate.")
	fs.StringVar(&api.APIService, "apiservice", api.APIService, "APIService (such as "+apiserver.AggregatedAPIService+") whose caBundle the facade keeps set to the CA of its certificate: ca.crt beside --tls-cert-file, else the certificate chain's last certificate. Empty leaves APIServices alone.")
	h := &o.Hub
	fs.StringVar(&h.BindAddress, "hub-bind-address", h.BindAddress, "Address the edge hub binds to (TLS): devices join and talk to it alone. Empty or 0: no hub.")
	fs.StringVar(&h.AdvertiseURL, "hub-advertise-url", h.AdvertiseURL, "The hub's URL as devices reach it (https://HOST:PORT): it goes into the join command and the hub's certificate.")
	fs.Func("hub-tls-san", "Comma-separated further names or addresses of the hub's certificate, besides --hub-advertise-url's host.", func(v string) error {
		h.ExtraSANs = append(h.ExtraSANs, splitList(v)...)
		return nil
	})
	fs.StringVar(&h.Namespace, "hub-namespace", h.Namespace, "Namespace of the hub's CA Secret, the join tokens and the hub's info ConfigMap.")
	fs.DurationVar(&h.CertValidity, "hub-cert-validity", h.CertValidity, "Life of a node's certificate; the agent renews it at 70-90% of it. A device offline past it joins again.")
	fs.StringVar(&o.TimeZone, "time-zone", o.TimeZone, "Time zone of the facade's yyyy-MM-dd HH:mm:ss times, as an IANA name.")
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
