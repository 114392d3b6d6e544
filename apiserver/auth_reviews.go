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
	"errors"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// TokenReviews of tokens the facade has not seen, per second and in a
// burst: enough for every real client to sign in, not for a flood.
const (
	reviewRate  = 50
	reviewBurst = 100
)

// tokenReviews is what the token cache asks when it has no answer for a
// token: the TokenReview, unless the token is new to the facade and the
// review limit is spent (429), so that a flood of made-up tokens costs no
// more reviews than the limit and real users, known, are never limited.
// It keeps the user of each token that authenticated, from its review for
// keep: the tokens seen, and the answers served through an outage.
type tokenReviews struct {
	review authenticator.Token
	known  *utilcache.LRUExpireCache // token hash -> user.Info
	keep   time.Duration
	limit  *rate.Limiter
}

func (t *tokenReviews) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	key := tokenKey(token)
	if _, seen := t.known.Get(key); !seen && !t.limit.Allow() {
		return nil, false, &apiError{status: http.StatusTooManyRequests, retryAfter: 1,
			msg: "Too many bearer tokens the facade has not seen yet are being checked; retry in a second."}
	}
	resp, ok, err := t.review.AuthenticateToken(ctx, token)
	if err != nil && reviewFailed(err) {
		return nil, false, err // not cached: asked again next time
	}
	if !ok {
		t.known.Remove(key)
		return nil, false, nil // cached as a refusal
	}
	t.known.Add(key, resp.User, t.keep)
	return resp, true, nil
}

// reviewFailed says whether err is the review failing (the API server
// unreachable, or refusing the facade itself) rather than its answer: the
// TokenReview authenticator returns the status.error of a token the API
// server refused as a plain error, and that is a 401 like any refusal.
func reviewFailed(err error) bool {
	var status apierrors.APIStatus
	var ue *url.Error
	return errors.As(err, &status) || errors.As(err, &ue) || isNetError(err) || errors.Is(err, context.Canceled)
}
