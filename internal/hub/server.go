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

package hub

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/shared/metapatch"
)

// fieldOwner is the field manager of the hub's own writes, so that the
// audit log and managedFields tell them from the manager's; a node's
// report is written as the agent's (agentFieldManager).
var fieldOwner = client.FieldOwner("edgeplane-hub")

// Options configure the hub.
type Options struct {
	// BindAddress is where the hub listens (TLS); empty or 0: no hub.
	BindAddress string
	// AdvertiseURL is the hub's URL as devices reach it (https://host:port,
	// the Service's or a load balancer's): it goes into the join command
	// and the serving certificate.
	AdvertiseURL string
	// ExtraSANs are more names or addresses of the serving certificate.
	ExtraSANs []string
	// Namespace holds the hub's CA, the join tokens and the hub's info.
	Namespace string
	// LeaseNamespace holds the nodes' Leases, the replicas' Leases and the
	// nodes' credentials Secrets.
	LeaseNamespace string
	// GracePeriod is how long a node may go without a heartbeat before
	// this replica releases its Lease; the manager's node grace period.
	GracePeriod time.Duration
	// RenewInterval is how often the replica renews its own Lease.
	RenewInterval time.Duration
	// CertValidity is the life of a node's certificate; the agent renews
	// it at 70-90% of it.
	CertValidity time.Duration
	// Identity names this replica's Lease; empty: the host name and a
	// random suffix, new at every start.
	Identity string
	Clock    clock.WithTicker
	// FullNodes says the process caches whole EdgeNodes anyway (it runs
	// the controllers or the facade): the hub reads them from that cache.
	// Else it watches their metadata alone, all it reads, and not every
	// agent report in full.
	FullNodes bool
}

// DefaultOptions are the hub's defaults.
func DefaultOptions() Options {
	return Options{Namespace: "edgeplane-system", LeaseNamespace: "edgeplane-node-lease", GracePeriod: 40 * time.Second,
		RenewInterval: 10 * time.Second, CertValidity: 7 * 24 * time.Hour}
}

// Enabled says whether the options run a hub.
func (o Options) Enabled() bool { return o.BindAddress != "" && o.BindAddress != "0" }

// Validate refuses options the hub cannot run with.
func (o *Options) Validate() error {
	u, err := url.Parse(o.AdvertiseURL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.Path != "" && u.Path != "/" {
		return fmt.Errorf("--hub-advertise-url %q: want https://HOST:PORT, as devices reach the hub", o.AdvertiseURL)
	}
	if o.CertValidity < time.Hour {
		return fmt.Errorf("--hub-cert-validity %s: at least 1h", o.CertValidity)
	}
	if o.GracePeriod <= o.RenewInterval {
		return fmt.Errorf("the node grace period (%s) must be longer than the hub's renew interval (%s)", o.GracePeriod, o.RenewInterval)
	}
	return nil
}

// Hub is the edge hub, a runnable of the manager on every replica.
type Hub struct {
	o       Options
	c       client.Client
	meta    *metapatch.Client // writes reports, answered with metadata
	cache   client.Reader
	api     client.Reader
	rec     recorder.EventRecorder
	log     logr.Logger
	metrics *metrics
	live    *liveness
	relay   *relay
	reports *reports
	conns   *conns
	joins   *rate.Limiter
	ca      *authority
	caCert  atomic.Pointer[x509.Certificate] // ca's, for other goroutines
	roots   *x509.CertPool                   // ca's, to verify nodes
	addr    atomic.Value
}

// New sets up the hub on mgr; it starts with the manager.
func New(ctx context.Context, mgr ctrl.Manager, o Options) (*Hub, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Identity == "" {
		o.Identity = replicaIdentity()
	}
	h := &Hub{o: o, c: mgr.GetClient(), cache: mgr.GetCache(), api: mgr.GetAPIReader(),
		rec: mgr.GetEventRecorder("edgeplane-hub"), log: ctrl.Log.WithName("hub"), metrics: hubMetrics, conns: newConns(),
		joins: rate.NewLimiter(200, 400)}
	h.relay = newRelay(h.metrics)
	h.reports = newReports(h.writeReport)
	var err error
	if h.meta, err = metapatch.New(h.c, mgr.GetConfig(), mgr.GetHTTPClient()); err != nil {
		return nil, err
	}
	ownCfg := rest.CopyConfig(mgr.GetConfig())
	ownCfg.QPS, ownCfg.Burst = 5, 10
	own, err := client.New(ownCfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, err
	}
	h.live = newLiveness(o.Identity, o.LeaseNamespace, o.GracePeriod, o.RenewInterval, h.c, h.cache, own, o.Clock, h.log, h.metrics)
	assignments, err := mgr.GetCache().GetInformer(ctx, &edgev1alpha1.NodeAssignment{})
	if err != nil {
		return nil, err
	}
	if _, err := assignments.AddEventHandler(h.relay.handler()); err != nil {
		return nil, err
	}
	nodes, err := mgr.GetCache().GetInformer(ctx, h.node(""))
	if err != nil {
		return nil, err
	}
	if _, err := nodes.AddEventHandler(h.revocations()); err != nil {
		return nil, err
	}
	// The informers the agents' reads are served from start with the
	// cache, so that the hub's first answers do not wait for them.
	for _, obj := range []client.Object{&corev1.Secret{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return nil, err
		}
	}
	if err := mgr.AddReadyzCheck("hub", func(*http.Request) error {
		if h.Addr() == "" {
			return errors.New("the hub is not serving yet")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return h, mgr.Add(h)
}

// NeedLeaderElection: every replica serves devices.
func (h *Hub) NeedLeaderElection() bool { return false }

// Addr is the address the hub listens on once it serves; empty before.
func (h *Hub) Addr() string {
	a, _ := h.addr.Load().(string)
	return a
}

// CACert is the hub's CA, once started.
func (h *Hub) CACert() *x509.Certificate {
	return h.caCert.Load()
}

// Start serves devices until ctx ends.
func (h *Hub) Start(ctx context.Context) error {
	setup, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	now := h.o.Clock.Now()
	ca, err := loadAuthority(setup, h.c, h.api, h.o.Namespace, now)
	if err != nil {
		return err
	}
	h.ca = ca
	h.caCert.Store(ca.cert)
	h.roots = x509.NewCertPool()
	h.roots.AddCert(ca.cert)
	u, _ := url.Parse(h.o.AdvertiseURL)
	serving, err := ca.servingCertificate(append([]string{u.Hostname()}, h.o.ExtraSANs...), now, 365*24*time.Hour)
	if err != nil {
		return err
	}
	if err := h.publish(setup); err != nil {
		return fmt.Errorf("publishing ConfigMap %s: %w", hubapi.InfoConfigMap, err)
	}
	// The replica's Lease exists before any node's Lease can name it.
	if err := h.live.renewReplica(setup, now); err != nil {
		return fmt.Errorf("creating the replica's Lease %s: %w", h.o.Identity, err)
	}
	l, err := net.Listen("tcp", h.o.BindAddress)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       5 * time.Minute,
		ConnContext:       h.conns.context,
		ConnState:         h.conns.state,
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{*serving},
			// Verified per request, so that an expired or unknown
			// certificate gets a sentence, not a bare TLS alert.
			ClientAuth: tls.RequestClientCert,
			NextProtos: []string{"h2", "http/1.1"},
		},
	}
	h.addr.Store(l.Addr().String())
	h.log.Info("Edge hub serving", "address", l.Addr().String(), "advertised", h.o.AdvertiseURL, "replica", h.o.Identity, "caCertHash", hubapi.CAHash(ca.cert))
	var wg sync.WaitGroup
	wg.Go(func() { h.live.run(ctx) })
	wg.Go(func() { h.sweepTokens(ctx) })
	wg.Go(func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = srv.Close()
	})
	err = srv.ServeTLS(l, "", "")
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// publish writes how devices reach the hub into its info ConfigMap, for
// kubectl edge node add; nothing when it already says so. The replicas of
// a rollout start together and publish at once: one that finds another
// wrote first reads again, rather than giving up its start.
func (h *Hub) publish(ctx context.Context) error {
	lost := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	return retry.OnError(retry.DefaultBackoff, lost, func() error { return h.publishOnce(ctx) })
}

func (h *Hub) publishOnce(ctx context.Context) error {
	want := map[string]string{hubapi.InfoServer: strings.TrimSuffix(h.o.AdvertiseURL, "/"), hubapi.InfoCACert: string(h.ca.certPEM)}
	cm := &corev1.ConfigMap{}
	err := h.api.Get(ctx, client.ObjectKey{Namespace: h.o.Namespace, Name: hubapi.InfoConfigMap}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.o.Namespace, Name: hubapi.InfoConfigMap}, Data: want}
		return h.c.Create(ctx, cm, fieldOwner)
	case err != nil:
		return err
	case cm.Data[hubapi.InfoServer] == want[hubapi.InfoServer] && cm.Data[hubapi.InfoCACert] == want[hubapi.InfoCACert]:
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = want
	return h.c.Update(ctx, cm, fieldOwner)
}

// tokenSweepEvery is how often expired join tokens are deleted, as
// kube-controller-manager's token cleaner deletes bootstrap tokens.
const tokenSweepEvery = 10 * time.Minute

// sweepTokens deletes the join tokens an hour past their expiration, used
// or not, until ctx ends: for that hour a device that tries one is told
// it expired rather than that it is unknown. Every replica sweeps; a token another deleted first is
// gone either way.
func (h *Hub) sweepTokens(ctx context.Context) {
	for {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		list := &corev1.SecretList{}
		err := h.api.List(sctx, list, client.InNamespace(h.o.Namespace), client.MatchingFields{"type": string(hubapi.SecretTypeJoinToken)})
		now := h.o.Clock.Now()
		for i := range list.Items {
			s := &list.Items[i]
			if err == nil && hubapi.Expired(s, now.Add(-time.Hour)) {
				if derr := h.c.Delete(sctx, s, client.Preconditions{ResourceVersion: &s.ResourceVersion}); derr == nil {
					h.log.V(1).Info("Deleted an expired join token", "secret", s.Name)
				}
			}
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-h.o.Clock.After(tokenSweepEvery):
		}
	}
}

// ServeHTTP routes a device's request: a join needs no certificate, the
// rest a node's.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == hubapi.JoinPath {
		h.join(w, r)
		return
	}
	node, err := h.authenticate(r)
	if err != nil {
		h.refuse(w, err.reason, err.status)
		return
	}
	h.conns.note(r.Context(), node)
	if r.URL.Path == hubapi.RenewPath {
		h.renew(w, r, node)
		return
	}
	req, perr := parseRequest(r.Method, r.URL)
	if perr == nil {
		perr = scope{leaseNamespace: h.o.LeaseNamespace}.authorize(node, req)
	}
	if perr != nil {
		h.refuse(w, "Forbidden", apierrors.NewForbidden(edgev1alpha1.GroupVersion.WithResource(req.resource).GroupResource(), req.name, perr))
		return
	}
	h.serveAPI(w, r, node, req)
}

// authError is a refused authentication: a metric reason and a Status.
type authError struct {
	reason string
	status error
}

// authenticate finds the node of a request from its client certificate:
// one the hub's CA issued for a node that exists and was not revoked
// after it was issued.
func (h *Hub) authenticate(r *http.Request) (string, *authError) {
	unauth := func(reason, format string, args ...any) *authError {
		return &authError{reason, apierrors.NewUnauthorized(fmt.Sprintf(format, args...))}
	}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return "", unauth("Unauthenticated", "present the node certificate the hub issued when the device joined (edge-agent join)")
	}
	cert := r.TLS.PeerCertificates[0]
	now := h.o.Clock.Now()
	var err error
	if !h.conns.verified(r.Context(), cert, now) {
		// The chain is checked once per connection; its expiry, the node
		// and its revocation at every request, below.
		inter := x509.NewCertPool()
		for _, c := range r.TLS.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err = cert.Verify(x509.VerifyOptions{Roots: h.roots, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	}
	if err != nil {
		var inv x509.CertificateInvalidError
		if errors.As(err, &inv) && inv.Reason == x509.Expired {
			return "", unauth("Unauthenticated", "the certificate of node %s expired at %s: the device must join again with a new token (kubectl edge node token %s)",
				cert.Subject.CommonName, cert.NotAfter.UTC().Format(time.RFC3339), cert.Subject.CommonName)
		}
		return "", unauth("Unauthenticated", "the client certificate was not issued by this hub: %v", err)
	}
	if len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != hubapi.NodeCertOrganization {
		return "", unauth("Unauthenticated", "the client certificate is not a node's")
	}
	node := cert.Subject.CommonName
	n := h.node(node)
	if err := h.cache.Get(r.Context(), client.ObjectKey{Name: node}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return "", unauth("Revoked", "node %s no longer exists: its certificate is refused", node)
		}
		return "", &authError{"Unauthenticated", err}
	}
	if revoked, ok := revokedBefore(n); ok && cert.NotBefore.Before(revoked) {
		return "", unauth("Revoked", "the credentials of node %s were revoked at %s: the device must join again with a new token (kubectl edge node token %s)",
			node, revoked.Format(time.RFC3339), node)
	}
	return node, nil
}

// revokedBefore reads a node's revocation time.
func revokedBefore(n metav1.Object) (time.Time, bool) {
	v, ok := n.GetAnnotations()[hubapi.AnnotationRevokedBefore]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		// A revocation that cannot be read revokes everything.
		return time.Unix(1<<40, 0), true
	}
	return t, true
}

// revocations cuts a node's connections when it is deleted or revoked.
func (h *Hub) revocations() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(metav1.Object)
			n, ok2 := obj.(metav1.Object)
			if ok1 && ok2 && o.GetAnnotations()[hubapi.AnnotationRevokedBefore] != n.GetAnnotations()[hubapi.AnnotationRevokedBefore] {
				h.cut(n.GetName(), "revoked")
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if n, ok := obj.(metav1.Object); ok {
				h.cut(n.GetName(), "deleted")
			}
		},
	}
}

// node is an empty EdgeNode named name as the hub's cache holds nodes:
// whole, or its metadata alone (Options.FullNodes).
func (h *Hub) node(name string) client.Object {
	if h.o.FullNodes {
		return &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
	m.SetGroupVersionKind(edgev1alpha1.GroupVersion.WithKind("EdgeNode"))
	return m
}

// cut ends a node's watches and closes its connections; its next request
// is authenticated again, and refused.
func (h *Hub) cut(node, why string) {
	h.relay.cut(node)
	if n := h.conns.close(node); n > 0 {
		h.log.Info("Cut a node's connections", "node", node, "because", why, "connections", n)
	}
}

var unsafeName = regexp.MustCompile(`[^a-z0-9-]+`)

// replicaIdentity is the host name (the pod's name) with a random suffix:
// a restarted replica is a new one, and its nodes' Leases name the old
// one until they beat again.
func replicaIdentity() string {
	host, _ := os.Hostname()
	host = strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(host), "-"), "-")
	if len(host) > 40 {
		host = host[:40]
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "hub-" + host + "-" + hex.EncodeToString(b)
}
