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

// Package apiserver is the facade that serves the legacy /api/v1 contract.
// It answers reads from the manager's informer cache through field indexes
// and sends writes to the Kubernetes API server.
package apiserver

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/nodejoin"
)

// Options configure the facade.
type Options struct {
	// BindAddress is the address the facade listens on, such as ":8090".
	BindAddress string
	// Namespace holds the EdgeServices, DeployRecords and ProvisionTemplates
	// the facade serves.
	Namespace string
	// HubNamespace is the edge hub's: its info, and the join tokens the
	// facade's node routes write (the manager's --hub-namespace).
	HubNamespace string
	// Auth is AuthNone or AuthKubernetes.
	Auth string
	// AuthCacheTTL is how long an authentication or authorization decision
	// is reused.
	AuthCacheTTL time.Duration
	// AuthStaleTTL is how long past AuthCacheTTL a decision is still reused
	// while the API server cannot be reached, so that reads keep being
	// served from the cache through an outage.
	AuthStaleTTL time.Duration
	// TLSCertFile and TLSKeyFile turn on TLS when both are set; the
	// certificate is reloaded when the files change.
	TLSCertFile, TLSKeyFile string
	// Audiences are the audiences a bearer token must be valid for under
	// AuthKubernetes; empty means the API server's own.
	Audiences []string
	// APIService names the facade's APIService, whose caBundle the facade
	// keeps set to the CA of its serving certificate; empty leaves
	// APIServices alone.
	APIService string
	// InsecureAuthOverHTTP lets AuthKubernetes serve plain HTTP, which
	// sends bearer tokens in clear text.
	InsecureAuthOverHTTP bool
	// CORSAllowedOrigins are the web origins, such as
	// https://console.example.com, whose pages may call the facade; none by
	// default.
	CORSAllowedOrigins []string
	// Console serves the web console at /console/.
	Console bool
	// Location is the time zone of the yyyy-MM-dd HH:mm:ss times.
	Location *time.Location
	// Clock is the time the facade derives states from (a pull stalled,
	// an instance late); nil means the real clock. Auth answers age on
	// the real clock, in k8s.io/apiserver's caches.
	Clock clock.PassiveClock
}

// The values of Options.Auth.
const (
	AuthNone       = "none"
	AuthKubernetes = "kubernetes"
)

// DefaultOptions are the facade's defaults.
func DefaultOptions() Options {
	return Options{BindAddress: ":8090", Namespace: "default", HubNamespace: nodejoin.DefaultHubNamespace, Auth: AuthNone, AuthCacheTTL: 10 * time.Second, AuthStaleTTL: 5 * time.Minute, Console: true, Location: time.UTC}
}

// Validate checks the options before anything starts.
func (o Options) Validate() error {
	if o.Auth != AuthNone && o.Auth != AuthKubernetes {
		return fmt.Errorf("auth must be %q or %q, not %q", AuthNone, AuthKubernetes, o.Auth)
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return errors.New("a TLS certificate and its key go together")
	}
	if o.Auth == AuthKubernetes && o.TLSCertFile == "" && !o.InsecureAuthOverHTTP {
		return errors.New("auth kubernetes takes bearer tokens, which plain HTTP would send in clear text: " +
			"give a TLS certificate and key, or say explicitly that plain HTTP is wanted")
	}
	if o.APIService != "" && o.TLSCertFile == "" {
		return errors.New("an APIService can only trust a facade that serves TLS: give a certificate and key")
	}
	if o.Namespace == "" {
		return errors.New("the facade needs a namespace")
	}
	for _, origin := range o.CORSAllowedOrigins {
		u, err := url.Parse(origin)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
			return fmt.Errorf("CORS origin %q is not an origin such as https://console.example.com (scheme and host, no path; no wildcard)", origin)
		}
	}
	return nil
}

// Server is the facade. It runs on every replica, leader or not: as a
// manager Runnable, or beside the manager (the manager binary) so that it
// listens before the cache has synced.
type Server struct {
	opts   Options
	cache  cache.Cache   // the informer cache, which every read uses
	writer client.Client // writes go to the API server
	live   client.Reader // reads past the cache, to settle a write
	auth   authorizer
	// nodes is the node list's order; the object indexes serve the
	// container and record lists: nodeIndex and serviceIndex look objects
	// up by UID (get) and by name (object). indexesSynced says they hold
	// everything the cache had at its first sync.
	nodes, services  *creationOrder
	nodeIndex        *objectIndex[*edgev1alpha1.EdgeNode]
	serviceIndex     *objectIndex[*edgev1alpha1.EdgeService]
	instances        *instanceOrder
	recordsByService *objectIndex[*edgev1alpha1.DeployRecord]
	indexesSynced    []toolscache.InformerSynced
	synced           atomic.Bool
	log              logr.Logger
	// Addr is the address the facade listens on once started.
	addr atomic.Value
}

// New returns the facade of a manager. The manager's cache must carry the
// indexes of internal/manager/index.
func New(mgr ctrl.Manager, o Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	s := &Server{
		opts: o, cache: mgr.GetCache(), writer: mgr.GetClient(), live: mgr.GetAPIReader(),
		log: mgr.GetLogger().WithName("facade"),
	}
	if err := s.registerIndexes(mgr.GetCache()); err != nil {
		return nil, err
	}
	s.auth = allowAll{}
	if o.Auth == AuthKubernetes {
		a, err := newKubeAuthorizer(mgr.GetConfig(), o.Namespace, o.Audiences, o.AuthCacheTTL, o.AuthStaleTTL)
		if err != nil {
			return nil, err
		}
		s.auth = a
	}
	return s, nil
}

// registerIndexes builds the facade's own indexes from the cache's
// informers: the node list's order and the object indexes.
func (s *Server) registerIndexes(c cache.Cache) error {
	inNamespace := func(o client.Object) bool { return o.GetNamespace() == s.opts.Namespace }
	s.nodes, s.services = &creationOrder{}, &creationOrder{}
	s.nodeIndex = newObjectIndex(func(n *edgev1alpha1.EdgeNode) []string { return []string{string(n.UID)} }, nil)
	s.serviceIndex = newObjectIndex(func(svc *edgev1alpha1.EdgeService) []string {
		if !inNamespace(svc) {
			return nil
		}
		return []string{string(svc.UID)}
	}, nil)
	s.instances = newInstanceOrder(func(namespace string) bool { return namespace == s.opts.Namespace })
	s.recordsByService = newObjectIndex(func(rec *edgev1alpha1.DeployRecord) []string {
		if uid := rec.Labels[edgev1alpha1.LabelServiceUID]; uid != "" && inNamespace(rec) {
			return []string{uid}
		}
		return nil
	}, func(a, b *edgev1alpha1.DeployRecord) int { // newest revision first
		if c := cmp.Compare(b.Spec.Revision, a.Spec.Revision); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, h := range []struct {
		obj     client.Object
		handler toolscache.ResourceEventHandler
	}{
		{&edgev1alpha1.EdgeNode{}, orderHandler[*edgev1alpha1.EdgeNode](s.nodes, nil)},
		{&edgev1alpha1.EdgeService{}, orderHandler(s.services, func(svc *edgev1alpha1.EdgeService) bool { return inNamespace(svc) })},
		{&edgev1alpha1.EdgeNode{}, s.nodeIndex.handler()},
		{&edgev1alpha1.EdgeService{}, s.serviceIndex.handler()},
		{&edgev1alpha1.NodeAssignment{}, s.instances.handler()},
		{&edgev1alpha1.DeployRecord{}, s.recordsByService.handler()},
	} {
		inf, err := c.GetInformer(context.Background(), h.obj)
		if err != nil {
			return err
		}
		reg, err := inf.AddEventHandler(h.handler)
		if err != nil {
			return err
		}
		s.indexesSynced = append(s.indexesSynced, reg.HasSynced)
	}
	return nil
}

// lookup lists from the cache the objects an index maps value to, in the
// facade's namespace when namespaced. The objects are the cache's own, not
// copies: callers only read them.
func (s *Server) lookup(ctx context.Context, list client.ObjectList, field, value string, namespaced bool) error {
	opts := []client.ListOption{client.MatchingFields{field: value}, client.UnsafeDisableDeepCopy}
	if namespaced {
		opts = append(opts, client.InNamespace(s.opts.Namespace))
	}
	if err := s.cache.List(ctx, list, opts...); err != nil {
		return fromKube(err)
	}
	return nil
}

// NeedLeaderElection lets every replica serve.
func (s *Server) NeedLeaderElection() bool { return false }

// Addr is the address the facade listens on, once started.
func (s *Server) Addr() string {
	a, _ := s.addr.Load().(string)
	return a
}

// Synced says whether the facade answers its routes: its cache and its own
// indexes have synced. The manager's readiness includes it, so that a
// Service sends no request to a replica that would answer 503.
func (s *Server) Synced() bool { return s.synced.Load() }

// Start serves until ctx is done.
func (s *Server) Start(ctx context.Context) error {
	if a, ok := s.auth.(*kubeAuthorizer); ok {
		a.stopWith(ctx) // before the first request can start a probe
	}
	ln, err := net.Listen("tcp", s.opts.BindAddress)
	if err != nil {
		return err
	}
	s.addr.Store(ln.Addr().String())
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
	}
	go func() {
		if s.cache.WaitForCacheSync(ctx) && toolscache.WaitForCacheSync(ctx.Done(), s.indexesSynced...) {
			s.synced.Store(true)
		}
	}()
	if ka, ok := s.auth.(*kubeAuthorizer); ok {
		ka.proxy.start(ctx, s.log)
	}
	errs := make(chan error, 2)
	tlsOn := s.opts.TLSCertFile != "" && s.opts.TLSKeyFile != ""
	if tlsOn {
		// The certificate is read again when its files change, so a
		// renewed certificate (cert-manager, a rotated Secret) needs no restart.
		cw, err := certwatcher.New(s.opts.TLSCertFile, s.opts.TLSKeyFile)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("facade certificate: %w", err)
		}
		srv.TLSConfig.GetCertificate = cw.GetCertificate
		if s.opts.APIService != "" {
			changed := make(chan struct{}, 1)
			cw.RegisterCallback(func(tls.Certificate) {
				select {
				case changed <- struct{}{}:
				default:
				}
			})
			go s.keepCABundle(ctx, changed)
		}
		if s.opts.Auth == AuthKubernetes {
			// kube-apiserver's aggregation layer proves itself with a
			// client certificate; the front-proxy authenticator checks it
			// against the requestheader CA, which can change at any time,
			// so the handshake asks for one without checking it.
			srv.TLSConfig.ClientAuth = tls.RequestClientCert
		}
		go func() {
			if err := cw.Start(ctx); err != nil {
				errs <- fmt.Errorf("watching the facade certificate: %w", err)
			}
		}()
	}
	go func() {
		s.log.Info("Serving the /api/v1 facade", "address", ln.Addr().String(), "tls", tlsOn, "auth", s.opts.Auth)
		if tlsOn {
			errs <- srv.ServeTLS(ln, "", "")
		} else {
			errs <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Permission is a verb on a resource of edge.edgeplane.io (resource or
// resource/subresource), in the facade's namespace unless cluster-scoped.
type Permission struct {
	Verb, Resource string
}

// writeTimeout bounds the API server calls of one write request.
const writeTimeout = 4 * time.Second

// RouteAccess is one route of the facade and the access its
// SubjectAccessReviews ask for under --auth=kubernetes: every one of Needs.
type RouteAccess struct {
	Method, Pattern, Name string
	Needs                 []Permission
	// Aggregated is what kube-apiserver authorizes first when the route is
	// called under AggregatedPrefix: a verb on a subresource of "api" in
	// AggregatedGroup, named AggregatedName.
	Aggregated Permission
}

// Routes lists the facade's routes with the access each needs.
func Routes() []RouteAccess {
	rs := (&Server{}).routes()
	out := make([]RouteAccess, 0, len(rs))
	for _, r := range rs {
		out = append(out, RouteAccess{Method: r.method, Pattern: r.pattern, Name: r.name, Needs: r.needs, Aggregated: AggregatedAccess(r.method, r.pattern)})
	}
	return out
}

// route is one endpoint of the contract and what it needs in Kubernetes'
// terms, for authorization.
type route struct {
	method, pattern, name string
	needs                 []Permission
	handle                func(r *http.Request) (any, error)
}

func needs(verb, resource string) []Permission { return []Permission{{verb, resource}} }

func (s *Server) routes() []route {
	return []route{
		{http.MethodGet, "/api/v1/node", "listNodes", needs("list", "edgenodes"), s.listNodes},
		// A join token is a Secret in the hub's namespace, which callers
		// need not be able to read or write: create on the subresource
		// edgenodes/token is the permission to have one issued.
		{http.MethodPost, "/api/v1/node", "createNode", []Permission{{"create", "edgenodes"}, {"create", "edgenodes/token"}}, s.createNode},
		{http.MethodPost, "/api/v1/node/{id}/token", "createNodeToken", needs("create", "edgenodes/token"), s.newNodeToken},
		{http.MethodGet, "/api/v1/container/service", "listContainersOfServices", needs("list", "edgeservices"), s.listContainersOfServices},
		{http.MethodGet, "/api/v1/container/node", "listContainersOfNodes", needs("list", "edgeservices"), s.listContainersOfNodes},
		{http.MethodGet, "/api/v1/container/{id}", "getContainer", needs("get", "edgeservices"), s.getContainer},
		{http.MethodGet, "/api/v1/service/record", "listRecords", needs("list", "deployrecords"), s.listRecords},
		{http.MethodGet, "/api/v1/service/record/{id}", "getRecord", needs("get", "deployrecords"), s.getRecord},
		{http.MethodGet, "/api/v1/service", "listServices", needs("list", "edgeservices"), s.listServices},
		{http.MethodPost, "/api/v1/service", "createService",
			// The template is read from the cache, by id, as the tree lists them.
			[]Permission{{"create", "edgeservices"}, {"list", "provisiontemplates"}}, s.createService},
		{http.MethodPatch, "/api/v1/service/{id}", "patchService", needs("patch", "edgeservices"), s.patchService},
		{http.MethodPost, "/api/v1/service/{id}/rollback", "rollbackService",
			[]Permission{{"patch", "edgeservices"}, {"get", "deployrecords"}}, s.rollbackService},
		{http.MethodGet, "/api/v1/service/path", "listServicesByPath", needs("list", "edgeservices"), s.listServicesByPath},
		{http.MethodDelete, "/api/v1/service/path", "deleteServicesByPath",
			// Force-deleting removes edgeplane's finalizer on the caller's
			// behalf: that takes the permission Kubernetes uses for
			// finalizers, update on edgeservices/finalizers.
			[]Permission{{"delete", "edgeservices"}, {"update", "edgeservices/finalizers"}}, s.deleteServicesByPath},
		{http.MethodGet, "/api/v1/provision-template/path-label", "listFolder", needs("list", "provisiontemplates"), s.listFolder},
		{http.MethodPost, "/api/v1/provision-template/path-label/service/batch", "createTemplates", needs("create", "provisiontemplates"), s.createTemplates},
		{http.MethodPost, "/api/v1/provision-template/path-label/folder", "createFolder", needs("create", "provisiontemplates"), s.createFolder},
	}
}

// Handler is the facade's HTTP handler: the routes of the contract, the
// OpenAPI document, probes, and the envelope for everything else.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	byPattern := map[string][]route{}
	var patterns []string
	for _, rt := range s.routes() {
		if byPattern[rt.pattern] == nil {
			patterns = append(patterns, rt.pattern)
		}
		byPattern[rt.pattern] = append(byPattern[rt.pattern], rt)
	}
	unknown := instrument("unknown", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound("No endpoint %s %s; see /api/v1/openapi.json.", r.Method, r.URL.Path))
	}))
	for _, p := range patterns {
		h := s.serveRoutes(byPattern[p])
		// net/http's mux refuses /service/{id}/rollback beside the
		// contract's /service/record/{id} (each matches a path the other
		// does not); /service/{id}/{action} is less specific than the
		// record's route, so it registers, and the action is checked here.
		if head, ok := strings.CutSuffix(p, "/{id}/rollback"); ok {
			route := h
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.PathValue("action") != "rollback" {
					unknown.ServeHTTP(w, r)
					return
				}
				route.ServeHTTP(w, r)
			})
			p = head + "/{id}/{action}"
		}
		mux.Handle(p, h)
	}
	mux.Handle(openAPIPath, instrument("openapi", http.HandlerFunc(serveOpenAPI)))
	if s.opts.Console {
		console := instrument("console", consoleHandler())
		mux.Handle(consolePrefix, console)
		mux.Handle(strings.TrimSuffix(consolePrefix, "/"), console)
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { writeOK(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if !s.synced.Load() {
			writeError(w, errorf(http.StatusServiceUnavailable, "The informer cache has not synced yet."))
			return
		}
		writeOK(w, "ok")
	})
	mux.Handle("/", unknown)
	return recoverPanics(s.log, s.cors(s.doors(s.trailingSlash(mux))))
}

// trailingSlash serves a GET (or HEAD) of a route with one trailing slash,
// /api/v1/node/, as the route itself: what some clients' URL joining
// produces. Nothing else is rewritten.
func (s *Server) trailingSlash(mux *http.ServeMux) http.Handler {
	gets := map[string]bool{}
	for _, rt := range s.routes() {
		if rt.method == http.MethodGet {
			gets[rt.pattern] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && len(r.URL.Path) > 1 && strings.HasSuffix(r.URL.Path, "/") {
			trimmed := r.Clone(r.Context())
			trimmed.URL.Path, trimmed.URL.RawPath = strings.TrimSuffix(r.URL.Path, "/"), ""
			if _, pattern := mux.Handler(trimmed); gets[pattern] {
				mux.ServeHTTP(w, trimmed)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// cors answers preflight requests and sets the CORS headers for the
// origins of --cors-allowed-origins, so that a web console on one of them
// can call the facade. Other origins get no CORS headers (a browser then
// keeps the response from the page) and a preflight from one gets 403.
func (s *Server) cors(next http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, o := range s.opts.CORSAllowedOrigins {
		allowed[o] = true
	}
	headers := "Content-Type"
	if s.opts.Auth == AuthKubernetes {
		headers = "Authorization, Content-Type"
	}
	refuse := instrument("preflight", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusForbidden, "Origin %q is not in --cors-allowed-origins.", r.Header.Get("Origin")))
	}))
	accept := instrument("preflight", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeOK(w, nil) }))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if len(allowed) == 0 || origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if !allowed[origin] {
			if preflight {
				refuse.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Retry-After, Allow")
		if preflight {
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PATCH, DELETE")
			h.Set("Access-Control-Allow-Headers", headers)
			h.Set("Access-Control-Max-Age", "600")
			accept.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveRoutes serves the routes of one pattern, one per method: a method
// none of them takes is a 405 that lists those they do.
func (s *Server) serveRoutes(rts []route) http.Handler {
	var allow []string
	byMethod := map[string]http.Handler{}
	for _, rt := range rts {
		h := s.serveRoute(rt)
		byMethod[rt.method] = h
		allow = append(allow, rt.method)
		if rt.method == http.MethodGet {
			// HEAD answers every GET route: the same status and headers,
			// no body (net/http drops it).
			byMethod[http.MethodHead] = h
			allow = append(allow, http.MethodHead)
		}
	}
	allowed := strings.Join(allow, ", ")
	refuse := instrument(rts[0].name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		writeError(w, errorf(http.StatusMethodNotAllowed, "%s does not allow %s; use %s.", rts[0].pattern, r.Method, allowed))
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := byMethod[r.Method]; ok {
			h.ServeHTTP(w, r)
			return
		}
		refuse.ServeHTTP(w, r)
	})
}

// serveRoute checks readiness and authorization, runs the route and
// writes its envelope.
func (s *Server) serveRoute(rt route) http.Handler {
	return instrument(rt.name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.auth.authorize(r, rt.needs); err != nil {
			writeError(w, err)
			return
		}
		if !s.synced.Load() {
			writeError(w, errorf(http.StatusServiceUnavailable, "The informer cache has not synced yet; try again shortly."))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			// A write waits for the API server at most this long, so that
			// an outage answers 503 rather than holding the client.
			ctx, cancel := context.WithTimeout(r.Context(), writeTimeout)
			defer cancel()
			r = r.WithContext(ctx)
		}
		data, err := rt.handle(r)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				s.log.Error(err, "Request failed", "route", rt.name)
			}
			writeError(w, err)
			return
		}
		writeOK(w, data)
	}))
}

// recoverPanics answers a panicking handler with a 500 envelope.
func recoverPanics(log logr.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error(fmt.Errorf("%v", v), "Handler panicked", "method", r.Method, "path", r.URL.Path)
				writeError(w, errorf(http.StatusInternalServerError, "Internal error."))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// instrument counts and times the requests next answers under route with
// client_golang's handler instrumentation: the route is curried in, the
// method is methodLabel's.
func instrument(route string, next http.Handler) http.Handler {
	byRoute := prometheus.Labels{"route": route}
	method := promhttp.WithLabelFromRequest("method", func(r *http.Request) string { return methodLabel(r.Method) })
	return promhttp.InstrumentHandlerDuration(requestDuration.MustCurryWith(byRoute),
		promhttp.InstrumentHandlerCounter(requestsTotal.MustCurryWith(byRoute), next, method))
}

// methodLabel is the method as a metric label: the client chooses the
// method, so any but the standard ones fold into "other", one series.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}
