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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	"k8s.io/apiserver/pkg/authentication/user"
	kubeauthz "k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/util/webhook"
	tokenwebhook "k8s.io/apiserver/plugin/pkg/authenticator/token/webhook"
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
// aggregation layer forwards or else by a bearer token, and checks each
// route on the kind the route reads or writes, as the API server itself
// would. Both checks are k8s.io/apiserver's delegating pieces, as
// aggregated API servers use them: a TokenReview authenticator behind its
// token cache, and a SubjectAccessReview authorizer with its decision
// cache, each reused for the cache TTL. What is the facade's own is thin:
// the review limit for tokens never seen (tokenReviews), and the last
// answers, kept for the stale TTL past the cache TTL and served only while
// the API server cannot be reached (auth_stale.go).
type kubeAuthorizer struct {
	client    kubernetes.Interface // for the probe
	proxy     *frontProxy
	namespace string
	audiences authenticator.Audiences
	tokens    authenticator.Token
	access    kubeauthz.Authorizer
	// ttl is how long an answer is reused; stale is how long past that it
	// is still reused while the API server cannot be reached.
	ttl, stale time.Duration
	// users and decisions are the last answers, kept from their review
	// for ttl+stale under a hash of the token or of the identity.
	users     *utilcache.LRUExpireCache // token hash -> user.Info
	decisions *utilcache.LRUExpireCache // key + verb + resource -> reviewed
	// down is set when a review found the API server unreachable: stale
	// answers then come at once instead of each request waiting out a
	// review's timeout, and one probe at a time watches for the API server
	// to come back.
	down, probing atomic.Bool
	// life ends the probe with the server that runs it (Start's context).
	life atomic.Pointer[context.Context]
}

// reviewed is a decision and when it was reviewed.
type reviewed struct {
	allowed bool
	at      time.Time
}

// reviewTimeout bounds a TokenReview or SubjectAccessReview, so that a slow
// or stopped API server answers a request with 503 rather than holding it.
// Within it, a review the API server answers with 429 or 500 is retried
// (k8s.io/apiserver's webhook backoff: 0.5 s, then ×1.5, five tries).
const reviewTimeout = 5 * time.Second

func newKubeAuthorizer(cfg *rest.Config, namespace string, audiences []string, ttl, stale time.Duration) (*kubeAuthorizer, error) {
	// The reviews' client has room above the review limit, so that the
	// limit is what bounds a flood of made-up tokens (429 at once), not the
	// client's own rate, which would queue the flood's reviews and real
	// users' SubjectAccessReviews behind them alike.
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS >= 0 {
		cfg.QPS, cfg.Burst = max(cfg.QPS, 2*reviewRate), max(cfg.Burst, 2*reviewBurst)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	proxy, err := newFrontProxy(c)
	if err != nil {
		return nil, err
	}
	a := &kubeAuthorizer{
		client: c, proxy: proxy, namespace: namespace, audiences: audiences, ttl: ttl, stale: stale,
		users: utilcache.NewLRUExpireCache(4096), decisions: utilcache.NewLRUExpireCache(16384),
	}
	backoff := webhook.DefaultRetryBackoffWithInitialDelay(500 * time.Millisecond)
	review, err := tokenwebhook.NewFromInterface(c.AuthenticationV1(), audiences, backoff, reviewTimeout, tokenwebhook.AuthenticatorMetrics{
		RecordRequestTotal: func(context.Context, string) {}, RecordRequestLatency: func(context.Context, string, float64) {},
	})
	if err != nil {
		return nil, err
	}
	// Refusals are cached as long as answers; errors never are.
	a.tokens = tokencache.New(&tokenReviews{review: review, known: a.users, keep: ttl + stale, limit: rate.NewLimiter(reviewRate, reviewBurst)}, false, ttl, ttl)
	a.access, err = authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: c.AuthorizationV1(), AllowCacheTTL: ttl, DenyCacheTTL: ttl, WebhookRetryBackoff: &backoff,
	}.New()
	if err != nil {
		return nil, err
	}
	return a, nil
}

func (a *kubeAuthorizer) authorize(r *http.Request, needs []Permission) error {
	// Once per request: the front-proxy authenticator consumes the
	// identity headers it reads.
	u, key, err := a.identify(r)
	if err != nil {
		return err
	}
	for _, p := range needs {
		if err := a.check(r.Context(), u, key, p); err != nil {
			return err
		}
	}
	return nil
}

// identify finds who is calling: the user kube-apiserver forwards, when
// the connection carries its front-proxy client certificate, else the
// user of the bearer token. Identity headers of any other caller are
// never read. key identifies the caller in the caches.
func (a *kubeAuthorizer) identify(r *http.Request) (u user.Info, key string, err error) {
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
	key = tokenKey(token)
	if u, err = a.authenticate(r.Context(), key, token); err != nil {
		return nil, "", err
	}
	if u == nil {
		return nil, "", errorf(http.StatusUnauthorized, "The bearer token is not valid.")
	}
	return u, key, nil
}

// authenticate is the token's user, nil for a token the API server
// refuses.
func (a *kubeAuthorizer) authenticate(ctx context.Context, key, token string) (user.Info, error) {
	if v, ok := a.lastKnown(a.users, key); ok {
		return v.(user.Info), nil
	}
	if len(a.audiences) > 0 {
		ctx = authenticator.WithAudiences(ctx, a.audiences)
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	resp, ok, err := a.tokens.AuthenticateToken(ctx, token)
	switch {
	case errors.Is(err, context.Canceled):
		// The token cache hands back the caller's own context error.
		return nil, errorf(http.StatusServiceUnavailable, "The Kubernetes API server is unavailable: %v.", err)
	case err != nil:
		if v, ok := a.unreachable(err, a.users, key); ok {
			return v.(user.Info), nil
		}
		return nil, fromKube(err)
	case !ok:
		return nil, nil
	}
	return resp.User, nil
}

// check asks, or remembers, whether u may p.
func (a *kubeAuthorizer) check(ctx context.Context, u user.Info, key string, p Permission) error {
	dkey := key + "|" + p.Verb + "|" + p.Resource
	if v, ok := a.lastKnown(a.decisions, dkey); ok {
		return denied(v.(reviewed).allowed, u, p)
	}
	res, sub, _ := strings.Cut(p.Resource, "/")
	attrs := kubeauthz.AttributesRecord{User: u, Verb: p.Verb, APIGroup: edgev1alpha1.GroupVersion.Group,
		Resource: res, Subresource: sub, ResourceRequest: true}
	if res != "edgenodes" {
		attrs.Namespace = a.namespace
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	decision, _, err := a.access.Authorize(ctx, attrs)
	if err != nil {
		if v, ok := a.unreachable(err, a.decisions, dkey); ok {
			return denied(v.(reviewed).allowed, u, p)
		}
		return fromKube(err)
	}
	allowed := decision == kubeauthz.DecisionAllow
	// The authorizer does not say whether it asked or remembered: an
	// answer that changed, or comes a TTL after the last, was asked, and
	// is kept ttl+stale from then.
	if v, ok := a.decisions.Get(dkey); !ok || v.(reviewed).allowed != allowed || time.Since(v.(reviewed).at) >= a.ttl {
		a.decisions.Add(dkey, reviewed{allowed, time.Now()}, a.ttl+a.stale)
	}
	return denied(allowed, u, p)
}

// tokenKey is the caches' key for a token, never the token itself.
func tokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// hashIdentity is a cache key for a forwarded identity: every part of it,
// so that users who differ in a group never share a decision.
func hashIdentity(u user.Info) string {
	// map keys are sorted: one encoding per identity
	data, _ := json.Marshal(user.DefaultInfo{Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func denied(allowed bool, u user.Info, p Permission) error {
	if allowed {
		return nil
	}
	return errorf(http.StatusForbidden, "User %q may not %s %s.%s.", u.GetName(), p.Verb, p.Resource, edgev1alpha1.GroupVersion.Group)
}
