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
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
)

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
func (f *frontProxy) user(r *http.Request) user.Info {
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
	return resp.User
}
