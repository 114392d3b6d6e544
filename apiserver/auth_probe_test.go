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
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The probe that watches for an unreachable API server to come back stops
// with the server that runs it, not only when the API server answers.
func TestProbeStopsWithTheServer(t *testing.T) {
	c, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1", Timeout: time.Second}) // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	a := &kubeAuthorizer{client: c}
	ctx, cancel := context.WithCancel(context.Background())
	a.stopWith(ctx)
	a.down.Store(true)
	a.probe()
	time.Sleep(1500 * time.Millisecond) // a refused probe or two
	if !a.probing.Load() || !a.down.Load() {
		t.Fatal("the probe stopped while the API server was still unreachable")
	}
	cancel()
	if !waitFor(func() bool { return !a.probing.Load() }) {
		t.Fatalf("the probe still runs %s after its server stopped", ceiling)
	}
}

// ceiling bounds the waits for a condition: generous, since the condition
// ends the wait as soon as it holds.
const ceiling = time.Minute

// waitFor polls cond until it holds, or for ceiling; it says whether cond
// held.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(ceiling); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// fakeAPI answers TokenReviews (the token "good-…" is a user, anything
// else is refused with the API server's error text), SubjectAccessReviews
// (list is allowed, anything else denied) and /readyz, or 503 to
// everything while down; it counts the reviews asked, answered or not.
type fakeAPI struct {
	down              atomic.Bool
	tokenReviews, sar atomic.Int64
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		f.tokenReviews.Add(1)
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		f.sar.Add(1)
	}
	if f.down.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503,"message":"down"}`))
		return
	}
	switch r.URL.Path {
	case "/readyz":
		_, _ = w.Write([]byte("ok"))
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		var tr authenticationv1.TokenReview
		_ = json.NewDecoder(r.Body).Decode(&tr)
		if name, ok := strings.CutPrefix(tr.Spec.Token, "good-"); ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: tr.Spec.Audiences,
				User: authenticationv1.UserInfo{Username: name, Groups: []string{"system:authenticated"}}}
		} else {
			tr.Status = authenticationv1.TokenReviewStatus{Error: "[invalid bearer token, square/go-jose: compact JWS format must have three parts]"}
		}
		tr.APIVersion, tr.Kind = "authentication.k8s.io/v1", "TokenReview"
		_ = json.NewEncoder(w).Encode(&tr)
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		var sar authorizationv1.SubjectAccessReview
		_ = json.NewDecoder(r.Body).Decode(&sar)
		sar.Status.Allowed = sar.Spec.ResourceAttributes.Verb == "list"
		sar.APIVersion, sar.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
		_ = json.NewEncoder(w).Encode(&sar)
	default:
		http.NotFound(w, r)
	}
}

// fakeAuthorizer is the facade's authorizer against a fakeAPI.
func fakeAuthorizer(t *testing.T, ttl, stale time.Duration) (*fakeAPI, *kubeAuthorizer) {
	t.Helper()
	api := &fakeAPI{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	a, err := newKubeAuthorizer(&rest.Config{Host: srv.URL, QPS: -1}, "legacy", []string{"facade"}, ttl, stale)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a.stopWith(ctx)
	return api, a
}

// status is the HTTP status the facade answers a bearer token with, for
// needs.
func status(a *kubeAuthorizer, token string, needs ...Permission) int {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/node", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	if err := a.authorize(r, needs); err != nil {
		return fromKube(err).status
	}
	return http.StatusOK
}

// Answers are reused for the cache TTL; while the API server cannot be
// reached, for the stale TTL past that, at once and without a review; a
// token never seen gets 503; the probe finds the API server back.
//
// Two authorizers: reuse within the TTL is shown with a TTL of an hour,
// which no machine outruns; the outage with a TTL of 300 ms, slept past
// (a sleep that only ever gets longer on a busy machine), and a stale TTL
// of an hour.
func TestAnswersOutlastAnOutageForTheStaleTTL(t *testing.T) {
	list, create := Permission{"list", "edgenodes"}, Permission{"create", "provisiontemplates"}
	api, a := fakeAuthorizer(t, time.Hour, time.Hour)
	if got := status(a, "good-alice", list); got != http.StatusOK {
		t.Fatalf("list as alice: %d", got)
	}
	if got := status(a, "good-alice", create); got != http.StatusForbidden {
		t.Fatalf("create as alice: %d", got)
	}
	if got := status(a, "made-up"); got != http.StatusUnauthorized {
		t.Fatalf("a made-up token: %d", got)
	}
	status(a, "good-alice", list, create)
	status(a, "made-up")
	if tr, sar := api.tokenReviews.Load(), api.sar.Load(); tr != 2 || sar != 2 {
		t.Fatalf("within the TTL every answer is reused: %d TokenReviews, %d SubjectAccessReviews", tr, sar)
	}
	for _, k := range a.users.Keys() {
		if strings.Contains(k.(string), "alice") {
			t.Fatalf("a token is kept in clear: %v", k)
		}
	}

	api, a = fakeAuthorizer(t, 300*time.Millisecond, time.Hour)
	if got := status(a, "good-alice", list, create); got != http.StatusForbidden {
		t.Fatalf("list and create as alice: %d", got)
	}
	api.down.Store(true)
	time.Sleep(400 * time.Millisecond) // past the TTL
	if got := status(a, "good-alice", list); got != http.StatusOK {
		t.Fatalf("list as alice past the TTL, API server down: %d", got)
	}
	if !a.down.Load() {
		t.Fatal("the failed review did not mark the API server down")
	}
	// The fake counts the reviews it refuses while down: none asked is
	// none waited for, so the stale answers came at once.
	reviews := api.tokenReviews.Load() + api.sar.Load()
	for range 20 {
		if got := status(a, "good-alice", list, create); got != http.StatusForbidden {
			t.Fatalf("stale answers while down: %d", got)
		}
	}
	if n := api.tokenReviews.Load() + api.sar.Load(); n != reviews {
		t.Fatalf("%d reviews asked while down and answers were known", n-reviews)
	}
	if got := status(a, "good-bob", list); got != http.StatusServiceUnavailable {
		t.Fatalf("a token never seen, API server down: %d", got)
	}

	api.down.Store(false)
	if !waitFor(func() bool { return !a.down.Load() }) {
		t.Fatalf("the probe did not find the API server back within %s", ceiling)
	}
	if got := status(a, "good-bob", list); got != http.StatusOK {
		t.Fatalf("list as bob once the API server is back: %d", got)
	}
}

// With no stale TTL, an outage past the cache TTL refuses with 503.
func TestNoStaleTTLRefusesThroughAnOutage(t *testing.T) {
	api, a := fakeAuthorizer(t, 200*time.Millisecond, 0)
	list := Permission{"list", "edgenodes"}
	if got := status(a, "good-alice", list); got != http.StatusOK {
		t.Fatalf("list as alice: %d", got)
	}
	api.down.Store(true)
	time.Sleep(300 * time.Millisecond)
	if got := status(a, "good-alice", list); got != http.StatusServiceUnavailable {
		t.Fatalf("past the TTL with no stale TTL, API server down: %d", got)
	}
}

// Tokens never seen are reviewed at most at the review rate: past it, 429
// and no review; a token seen before is never limited, and a refusal is
// reused without a review.
func TestReviewsOfUnknownTokensAreLimited(t *testing.T) {
	list := Permission{"list", "edgenodes"}
	api, a := fakeAuthorizer(t, 300*time.Millisecond, time.Hour)
	if got := status(a, "good-alice", list); got != http.StatusOK {
		t.Fatalf("list as alice: %d", got)
	}
	time.Sleep(400 * time.Millisecond) // alice's answer is past the TTL: asked again below
	before, start := api.tokenReviews.Load(), time.Now()
	codes := flood(t, a, "made-up")
	if got := status(a, "good-alice", list); got != http.StatusOK {
		t.Fatalf("a known token during the flood: %d", got)
	}
	made := api.tokenReviews.Load() - before
	if limit := reviewBurst + reviewRate*time.Since(start).Seconds() + 2; float64(made) > limit {
		t.Fatalf("%d TokenReviews for the flood %v, more than %.0f", made, codes, limit)
	}

	// A refusal is reused for the TTL, limit spent or not: with a TTL of
	// an hour, however long the flood takes.
	api, a = fakeAuthorizer(t, time.Hour, time.Hour)
	if got := status(a, "made-up-0"); got != http.StatusUnauthorized {
		t.Fatalf("a made-up token: %d", got)
	}
	flood(t, a, "other")
	before = api.tokenReviews.Load()
	if got := status(a, "made-up-0"); got != http.StatusUnauthorized {
		t.Fatalf("a refused token again, the limit spent: %d", got)
	}
	if api.tokenReviews.Load() != before {
		t.Fatal("a refused token was reviewed again within the TTL")
	}
}

// flood sends tokens never seen until one is refused with 429: the review
// burst, and on while the limit refills faster than a slow machine sends.
// Every answer is 401 or 429; it returns how many of each.
func flood(t *testing.T, a *kubeAuthorizer, prefix string) map[int]int {
	t.Helper()
	codes := map[int]int{}
	for i := 0; codes[http.StatusTooManyRequests] == 0; i++ {
		if i == 100*reviewBurst {
			t.Fatalf("%d tokens never seen and none refused with 429: %v", i, codes)
		}
		code := status(a, fmt.Sprintf("%s-%d", prefix, i))
		if code != http.StatusUnauthorized && code != http.StatusTooManyRequests {
			t.Fatalf("token %d of the flood answered %d (so far %v)", i, code, codes)
		}
		codes[code]++
	}
	return codes
}
