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

package apiserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// authorizer decides whether a request may use a route.
type authorizer interface {
	// authorize allows r when its caller has every one of needs.
	authorize(r *http.Request, needs []Permission) error
}

type allowAll struct{}

func (allowAll) authorize(*http.Request, []Permission) error { return nil }

// kubeAuthorizer identifies the caller, by the identity kube-apiserver's
// aggregation layer forwards or else by a bearer token and a TokenReview,
// and checks each route with a SubjectAccessReview on the kind the route
// reads or writes, as the API server itself would. Decisions are cached
// briefly, keyed by a hash of the token or the forwarded identity, never
// the token itself.
type kubeAuthorizer struct {
	client    kubernetes.Interface
	proxy     *frontProxy
	namespace string
	audiences []string
	// ttl is how long a decision is reused; stale is how long past that it
	// is still reused while the API server cannot be reached.
	ttl, stale time.Duration
	now        func() time.Time
	// users holds tokens that authenticated, invalid the ones that did not:
	// apart, so that a flood of made-up tokens cannot evict real users.
	users     *utilcache.LRUExpireCache // token hash -> decided[*authenticationv1.UserInfo]
	invalid   *utilcache.LRUExpireCache // token hash -> struct{}
	decisions *utilcache.LRUExpireCache // token hash + verb + resource -> decided[bool]
	// reviews limits the TokenReviews of tokens neither cache knows.
	reviews *rate.Limiter
	// down is set when a review found the API server unreachable: stale
	// decisions then answer at once instead of each request waiting out a
	// review's timeout, and one probe at a time watches for the API server
	// to come back.
	down, probing atomic.Bool
	// life ends the probe with the server that runs it (Start's context).
	life atomic.Pointer[context.Context]
}

// stopWith ties the authorizer's background work to ctx, the server's.
func (a *kubeAuthorizer) stopWith(ctx context.Context) { a.life.Store(&ctx) }

// lifetime is the server's context; the background one before Start.
func (a *kubeAuthorizer) lifetime() context.Context {
	if ctx := a.life.Load(); ctx != nil {
		return *ctx
	}
	return context.Background()
}

// decided is a cached decision and when it was made.
type decided[T any] struct {
	value T
	at    time.Time
}

// TokenReviews of tokens the facade has not seen, per second and in a
// burst: enough for every real client to sign in, not for a flood.
const (
	reviewRate  = 50
	reviewBurst = 100
)

// reviewTimeout bounds a TokenReview or SubjectAccessReview, so that a slow
// or stopped API server answers a request with 503 rather than holding it.
const reviewTimeout = 5 * time.Second

func newKubeAuthorizer(cfg *rest.Config, namespace string, audiences []string, ttl, stale time.Duration, now func() time.Time) (*kubeAuthorizer, error) {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	proxy, err := newFrontProxy(c)
	if err != nil {
		return nil, err
	}
	return &kubeAuthorizer{
		client: c, proxy: proxy, namespace: namespace, audiences: audiences, ttl: ttl, stale: stale, now: now,
		users: utilcache.NewLRUExpireCache(4096), invalid: utilcache.NewLRUExpireCache(4096), decisions: utilcache.NewLRUExpireCache(16384),
		reviews: rate.NewLimiter(reviewRate, reviewBurst),
	}, nil
}

func (a *kubeAuthorizer) authorize(r *http.Request, needs []Permission) error {
	// Once per request: the front-proxy authenticator consumes the
	// identity headers it reads.
	user, key, err := a.identify(r)
	if err != nil {
		return err
	}
	for _, p := range needs {
		if err := a.decide(r, user, key, p.Verb, p.Resource); err != nil {
			return err
		}
	}
	return nil
}

// decide asks, or remembers, whether user may verb resource.
func (a *kubeAuthorizer) decide(r *http.Request, user *authenticationv1.UserInfo, key, verb, resource string) error {
	dkey := key + "|" + verb + "|" + resource
	cached, _ := a.decisions.Get(dkey)
	prev, _ := cached.(decided[bool])
	if ok := cached != nil; ok && a.fresh(prev.at) {
		return denied(prev.value, user, verb, resource)
	} else if ok && a.serveStale(prev.at) {
		return denied(prev.value, user, verb, resource)
	}
	res, sub, _ := strings.Cut(resource, "/")
	ra := &authorizationv1.ResourceAttributes{Group: edgev1alpha1.GroupVersion.Group, Resource: res, Subresource: sub, Verb: verb}
	if res != "edgenodes" {
		ra.Namespace = a.namespace
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	ctx, cancel := context.WithTimeout(r.Context(), reviewTimeout)
	defer cancel()
	sar, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: ra, User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		if a.unreachable(err) && cached != nil && a.withinStale(prev.at) {
			return denied(prev.value, user, verb, resource)
		}
		return fromKube(err)
	}
	a.decisions.Add(dkey, decided[bool]{sar.Status.Allowed, a.now()}, a.ttl+a.stale)
	return denied(sar.Status.Allowed, user, verb, resource)
}

// identify finds who is calling: the user kube-apiserver forwards, when
// the connection carries its front-proxy client certificate, else the
// user of the bearer token. Identity headers of any other caller are
// never read. key identifies the caller in the caches.
func (a *kubeAuthorizer) identify(r *http.Request) (user *authenticationv1.UserInfo, key string, err error) {
	if u := a.proxy.user(r); u != nil {
		return u, "proxy|" + hashIdentity(u), nil
	}
	if a.proxy.unready(r) {
		return nil, "", &apiError{status: http.StatusServiceUnavailable, retryAfter: 1,
			msg: "The facade has not read kube-apiserver's front-proxy settings yet; retry in a second."}
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		return nil, "", errorf(http.StatusUnauthorized, "A bearer token is required: send Authorization: Bearer <token>, or call through kube-apiserver at %s.", AggregatedPrefix)
	}
	sum := sha256.Sum256([]byte(token))
	key = hex.EncodeToString(sum[:])
	user, err = a.authenticate(r.Context(), key, token)
	if err != nil {
		return nil, "", err
	}
	if user == nil {
		return nil, "", errorf(http.StatusUnauthorized, "The bearer token is not valid.")
	}
	return user, key, nil
}

// hashIdentity is a cache key for a forwarded identity: every part of it,
// so that users who differ in a group never share a decision.
func hashIdentity(u *authenticationv1.UserInfo) string {
	data, _ := json.Marshal(u) // map keys are sorted: one encoding per identity
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// fresh says whether a decision made at t is within the TTL.
func (a *kubeAuthorizer) fresh(t time.Time) bool { return a.now().Sub(t) < a.ttl }

// withinStale says whether a decision made at t may still stand in while
// the API server cannot be reached.
func (a *kubeAuthorizer) withinStale(t time.Time) bool { return a.now().Sub(t) < a.ttl+a.stale }

// serveStale says whether a stale decision answers without asking: the
// API server is unreachable.
func (a *kubeAuthorizer) serveStale(t time.Time) bool {
	if !a.withinStale(t) || !a.down.Load() {
		return false
	}
	a.probe()
	return true
}

// unreachable says whether a review failed because the API server could
// not answer, and if so marks it down.
func (a *kubeAuthorizer) unreachable(err error) bool {
	if fromKube(err).status != http.StatusServiceUnavailable {
		return false
	}
	a.down.Store(true)
	a.probe()
	return true
}

// probe asks the API server's /readyz, once a second, until it answers
// or the server stops; then reviews are asked again. One probe runs at a
// time.
func (a *kubeAuthorizer) probe() {
	if !a.probing.CompareAndSwap(false, true) {
		return
	}
	life := a.lifetime()
	go func() {
		defer a.probing.Store(false)
		for {
			ctx, cancel := context.WithTimeout(life, reviewTimeout)
			err := a.client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
			cancel()
			if err == nil {
				a.down.Store(false)
				return
			}
			select {
			case <-life.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
}

func (a *kubeAuthorizer) authenticate(ctx context.Context, key, token string) (*authenticationv1.UserInfo, error) {
	cached, _ := a.users.Get(key)
	prev, _ := cached.(decided[*authenticationv1.UserInfo])
	if cached != nil && (a.fresh(prev.at) || a.serveStale(prev.at)) {
		return prev.value, nil
	}
	if _, ok := a.invalid.Get(key); ok {
		return nil, nil
	}
	if cached == nil && !a.reviews.Allow() {
		return nil, &apiError{status: http.StatusTooManyRequests, retryAfter: 1,
			msg: "Too many bearer tokens the facade has not seen yet are being checked; retry in a second."}
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	tr, err := a.client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: a.audiences},
	}, metav1.CreateOptions{})
	if err != nil {
		if a.unreachable(err) && cached != nil && a.withinStale(prev.at) {
			return prev.value, nil
		}
		return nil, fromKube(err)
	}
	if !tr.Status.Authenticated {
		a.users.Remove(key)
		a.invalid.Add(key, struct{}{}, a.ttl)
		return nil, nil
	}
	a.users.Add(key, decided[*authenticationv1.UserInfo]{&tr.Status.User, a.now()}, a.ttl+a.stale)
	return &tr.Status.User, nil
}

// authConfigMap holds the front-proxy settings kube-apiserver publishes
// for aggregated API servers: the requestheader CA, the allowed names and
// the identity headers.
const authConfigMap = "extension-apiserver-authentication"

// frontProxy authenticates the requests kube-apiserver proxies to the
// facade through the aggregation layer, with k8s.io/apiserver's
// request-header authenticator: the forwarded identity counts only on a
// connection whose client certificate the requestheader CA signed for an
// allowed name. The CA, names and headers follow the ConfigMap as it
// changes.
type frontProxy struct {
	ca      *dynamiccertificates.ConfigMapCAController
	headers *headerrequest.RequestHeaderAuthRequestController
	// authn checks the certificate (chain to the CA, allowed name) and
	// then reads the headers; identity reads only the headers, for a
	// connection whose certificate authn has already passed.
	authn, identity authenticator.Request
	// passed holds the certificates of connections authn passed, with the
	// CA bundle and names it passed them under: kube-apiserver keeps its
	// connections open, and checking an ECDSA chain on every request
	// was 40 % of the facade's CPU through it.
	passed *utilcache.LRUExpireCache // *x509.Certificate -> passedUnder
}

// passedUnder is the trust a certificate was checked against.
type passedUnder struct {
	caBundle []byte
	names    []string
}

// passedTTL is how long a connection's certificate check is reused.
const passedTTL = time.Minute

func newFrontProxy(c kubernetes.Interface) (*frontProxy, error) {
	ca, err := dynamiccertificates.NewDynamicCAFromConfigMapController("client-ca", metav1.NamespaceSystem, authConfigMap, "requestheader-client-ca-file", c)
	if err != nil {
		return nil, err
	}
	h := headerrequest.NewRequestHeaderAuthRequestController(authConfigMap, metav1.NamespaceSystem, c,
		"requestheader-username-headers", "requestheader-uid-headers", "requestheader-group-headers",
		"requestheader-extra-headers-prefix", "requestheader-allowed-names")
	slice := func(f func() []string) headerrequest.StringSliceProvider {
		return headerrequest.StringSliceProviderFunc(f)
	}
	authn := headerrequest.NewDynamicVerifyOptionsSecure(ca.VerifyOptions, slice(h.AllowedClientNames),
		slice(h.UsernameHeaders), slice(h.UIDHeaders), slice(h.GroupHeaders), slice(h.ExtraHeaderPrefixes))
	identity := headerrequest.NewDynamic(slice(h.UsernameHeaders), slice(h.UIDHeaders), slice(h.GroupHeaders), slice(h.ExtraHeaderPrefixes))
	return &frontProxy{ca: ca, headers: h, authn: authn, identity: identity, passed: utilcache.NewLRUExpireCache(1024)}, nil
}

// start follows the ConfigMap until ctx ends, from informers of their
// own. A ConfigMap that cannot be read only leaves the aggregated path
// unauthenticated until it can: bearer tokens keep working. The one read
// up front is there to say so in the log.
func (f *frontProxy) start(ctx context.Context, log logr.Logger) {
	go f.ca.Run(ctx, 1)
	go f.headers.Run(ctx, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
		defer cancel()
		if err := f.headers.RunOnce(ctx); err != nil {
			log.Error(err, "Cannot read the front-proxy settings yet; calls through kube-apiserver are refused until it can",
				"configMap", metav1.NamespaceSystem+"/"+authConfigMap)
		}
	}()
}

// unready says whether r looks forwarded by kube-apiserver (a client
// certificate and a user header) while the front-proxy settings have not
// been read yet: such a request is asked to come back, not refused, in a
// replica's first seconds.
func (f *frontProxy) unready(r *http.Request) bool {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || f.ca.CurrentCABundleContent() != nil {
		return false
	}
	for _, h := range append(f.headers.UsernameHeaders(), "X-Remote-User") {
		if r.Header.Get(h) != "" {
			return true
		}
	}
	return false
}

// user is the identity kube-apiserver forwards with r, or nil when r did
// not come from it.
func (f *frontProxy) user(r *http.Request) *authenticationv1.UserInfo {
	if f == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil
	}
	// The connection state, and so the certificate, is one per
	// connection: a certificate seen before under the same trust is this
	// connection's, already checked.
	cert := r.TLS.PeerCertificates[0]
	under := passedUnder{caBundle: f.ca.CurrentCABundleContent(), names: f.headers.AllowedClientNames()}
	check := f.authn
	if v, ok := f.passed.Get(cert); ok && time.Now().Before(cert.NotAfter) &&
		bytes.Equal(v.(passedUnder).caBundle, under.caBundle) && slices.Equal(v.(passedUnder).names, under.names) {
		check = f.identity
	}
	resp, ok, err := check.AuthenticateRequest(r)
	if err != nil || !ok {
		return nil
	}
	f.passed.Add(cert, under, passedTTL)
	u := resp.User
	info := &authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	for k, v := range u.GetExtra() {
		if info.Extra == nil {
			info.Extra = map[string]authenticationv1.ExtraValue{}
		}
		info.Extra[k] = v
	}
	return info
}

func denied(allowed bool, user *authenticationv1.UserInfo, verb, resource string) error {
	if allowed {
		return nil
	}
	return errorf(http.StatusForbidden, "User %q may not %s %s.%s.", user.Username, verb, resource, edgev1alpha1.GroupVersion.Group)
}
