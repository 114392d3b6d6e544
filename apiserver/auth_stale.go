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
	"net/http"
	"time"

	utilcache "k8s.io/apimachinery/pkg/util/cache"
)

// Serving the last answer through an outage is the facade's own: an
// aggregated API server's delegating authenticator and authorizer refuse
// everyone while the API server cannot be reached, and the facade's reads
// come from its cache, which keeps answering. A token or decision reviewed
// within --auth-cache-ttl plus --auth-stale-ttl keeps its answer then; a
// token never seen gets 503.

// stopWith ties the authorizer's background work to ctx, the server's.
func (a *kubeAuthorizer) stopWith(ctx context.Context) { a.life.Store(&ctx) }

// lifetime is the server's context; the background one before Start.
func (a *kubeAuthorizer) lifetime() context.Context {
	if ctx := a.life.Load(); ctx != nil {
		return *ctx
	}
	return context.Background()
}

// lastKnown is the last answer under key while the API server is known to
// be unreachable: it answers at once, without a review.
func (a *kubeAuthorizer) lastKnown(answers *utilcache.LRUExpireCache, key string) (any, bool) {
	if !a.down.Load() {
		return nil, false
	}
	v, ok := answers.Get(key)
	if ok {
		a.probe()
	}
	return v, ok
}

// unreachable says whether a review failed because the API server could
// not answer, and if so marks it down and gives the last answer under key,
// if there is one.
func (a *kubeAuthorizer) unreachable(err error, answers *utilcache.LRUExpireCache, key string) (any, bool) {
	if fromKube(err).status != http.StatusServiceUnavailable {
		return nil, false
	}
	a.down.Store(true)
	a.probe()
	return answers.Get(key)
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
