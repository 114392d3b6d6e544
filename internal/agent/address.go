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

package agent

import (
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"

	"k8s.io/client-go/rest"
)

// DefaultPort is the port of the address a node reports when it is given
// none (edge-agent --advertise-address): the agent itself serves no port,
// and 7200 is the one edgeplane's examples and the simulator give a
// device's agent.
const DefaultPort = 7200

// reportedAddress is the address a node reports in status.nodeInfo.address:
// the one it is given, else the host its connection to the cluster (the
// edge hub, or kube-apiserver) leaves from, with DefaultPort; "" while it
// has made no connection. An operator who knows better (NAT, a forwarded
// port) sets the EdgeNode's spec.address, which wins over this.
func reportedAddress(given string, local net.Addr) string {
	if given != "" {
		return given
	}
	tcp, ok := local.(*net.TCPAddr)
	if !ok || tcp == nil || tcp.IP == nil || tcp.IP.IsUnspecified() {
		return ""
	}
	// The zone of a link-local IPv6 address means nothing to another host.
	return net.JoinHostPort(tcp.IP.String(), strconv.Itoa(DefaultPort))
}

// localAddress follows the local end of the connections one client opens
// to the cluster, for the nodes of that client that are given no address.
type localAddress struct {
	mu       sync.Mutex
	addr     net.Addr
	onChange []func()
}

// instrument returns cfg with each request noting the local address of
// the connection it goes out on (a new one, or one kept open), whatever
// the transport: client-go's, or the hub connection's own.
func (l *localAddress) instrument(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &tracing{rt: rt, l: l} })
	return cfg
}

// seen notes the local address of a connection and, when the address it
// gives a node differs from the last one's (a new local port does not),
// tells the nodes.
func (l *localAddress) seen(a net.Addr) {
	l.mu.Lock()
	changed := reportedAddress("", a) != reportedAddress("", l.addr)
	if changed {
		l.addr = a
	}
	hooks := l.onChange
	l.mu.Unlock()
	if changed {
		for _, f := range hooks {
			f()
		}
	}
}

// last is the local address last seen; nil before any connection.
func (l *localAddress) last() net.Addr {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addr
}

func (l *localAddress) notify(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onChange = append(l.onChange, f)
}

// tracing is a round tripper that tells a localAddress the connection each
// request got.
type tracing struct {
	rt http.RoundTripper
	l  *localAddress
}

func (t *tracing) RoundTrip(req *http.Request) (*http.Response, error) {
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if info.Conn != nil {
			t.l.seen(info.Conn.LocalAddr())
		}
	}}
	return t.rt.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
}

// WrappedRoundTripper lets client-go's debugging reach the transport below.
func (t *tracing) WrappedRoundTripper() http.RoundTripper { return t.rt }
