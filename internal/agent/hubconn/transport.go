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

package hubconn

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// credentials hold the node's current key pair. Every TLS handshake asks
// them for the certificate, so a renewal takes effect without a restart.
type credentials struct {
	mu       sync.Mutex
	cert     *tls.Certificate
	onChange []func()
}

func (c *credentials) current() *tls.Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cert
}

func (c *credentials) getClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return c.current(), nil
}

// set replaces the pair and tells the transports that serve it.
func (c *credentials) set(cert *tls.Certificate) {
	c.mu.Lock()
	c.cert = cert
	hooks := slices.Clone(c.onChange)
	c.mu.Unlock()
	for _, f := range hooks {
		f()
	}
}

func (c *credentials) notify(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onChange = append(c.onChange, f)
}

// RESTConfig is the agent's client configuration through the hub: the
// hub's CA, and the node's certificate as it is at each handshake. When a
// renewal replaces the certificate, the connections opened with the old
// one are closed: a TLS connection keeps the identity of its handshake,
// and HTTP/2 sends every request, watches too, over one connection.
func (id *Identity) RESTConfig() (*rest.Config, error) {
	tlsConfig, err := rest.TLSConfigFor(&rest.Config{Host: id.Server, TLSClientConfig: rest.TLSClientConfig{CAData: id.caPEM}})
	if err != nil {
		return nil, err
	}
	tlsConfig.GetClientCertificate = id.creds.getClientCertificate
	conns := &tracker{
		dial:  (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		conns: map[*trackedConn]struct{}{},
	}
	t := utilnet.SetTransportDefaults(&http.Transport{
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         conns.DialContext,
	})
	id.creds.notify(func() {
		t.CloseIdleConnections()
		conns.closeAll()
	})
	// The TLS settings are the transport's: rest refuses a Transport with
	// TLS fields of its own.
	return &rest.Config{Host: id.Server, Transport: t}, nil
}

// tracker remembers the connections it dialed that are still open, so
// that they can all be closed at once.
type tracker struct {
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

type trackedConn struct {
	net.Conn
	t *tracker
}

func (t *tracker) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := t.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, t: t}
	t.mu.Lock()
	t.conns[tc] = struct{}{}
	t.mu.Unlock()
	return tc, nil
}

func (c *trackedConn) Close() error {
	c.t.mu.Lock()
	delete(c.t.conns, c)
	c.t.mu.Unlock()
	return c.Conn.Close()
}

// closeAll closes every open connection; requests on them fail and are
// retried by their callers (informers watch again) on new connections.
func (t *tracker) closeAll() {
	t.mu.Lock()
	conns := t.conns
	t.conns = map[*trackedConn]struct{}{}
	t.mu.Unlock()
	for c := range conns {
		_ = c.Conn.Close()
	}
}
