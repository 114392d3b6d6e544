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
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// TestReportedAddress: the address a node is given wins; else the host its
// connection leaves from, with port 7200; else none.
func TestReportedAddress(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given string
		local net.Addr
		want  string
	}{
		{"given", "edge-7.plant.local:8080", &net.TCPAddr{IP: net.ParseIP("10.0.0.7"), Port: 51234}, "edge-7.plant.local:8080"},
		{"given, no connection yet", "10.0.0.8:7200", nil, "10.0.0.8:7200"},
		{"IPv4 connection", "", &net.TCPAddr{IP: net.ParseIP("192.168.10.21"), Port: 51234}, "192.168.10.21:7200"},
		{"IPv6 connection", "", &net.TCPAddr{IP: net.ParseIP("fd00::7"), Port: 51234}, "[fd00::7]:7200"},
		{"link-local IPv6, its zone dropped", "", &net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 51234, Zone: "eth0"}, "[fe80::1]:7200"},
		{"loopback", "", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 51234}, "127.0.0.1:7200"},
		{"no connection yet", "", nil, ""},
		{"a nil TCP address", "", (*net.TCPAddr)(nil), ""},
		{"unspecified", "", &net.TCPAddr{IP: net.IPv4zero, Port: 51234}, ""},
		{"a Unix socket", "", &net.UnixAddr{Name: "/run/hub.sock", Net: "unix"}, ""},
	} {
		got := reportedAddress(tc.given, tc.local)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if got != "" && !edgev1alpha1.ValidAddress(got) {
			t.Errorf("%s: %q is no address the EdgeNode's schema takes", tc.name, got)
		}
	}
}

// TestLocalAddressOfConnection: a client instrumented by a localAddress
// notes the local end of its real connection, over HTTP/1.1 as over
// HTTP/2 (the hub's), and tells its nodes once per host, not once per
// request or connection.
func TestLocalAddressOfConnection(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		cfg := &rest.Config{}
		if h2 {
			srv.EnableHTTP2 = true
			srv.StartTLS()
			cfg.TLSClientConfig.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		} else {
			srv.Start()
		}
		cfg.Host = srv.URL
		l := &localAddress{}
		var told atomic.Int32
		l.notify(func() { told.Add(1) })
		hc, err := rest.HTTPClientFor(l.instrument(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if l.last() != nil {
			t.Fatalf("a local address %v before any connection", l.last())
		}
		for range 3 {
			resp, err := hc.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if h2 && resp.ProtoMajor != 2 {
				t.Fatalf("%s, want HTTP/2", resp.Proto)
			}
			hc.CloseIdleConnections() // the next request opens a new connection, from a new port
		}
		srv.Close()
		if got := reportedAddress("", l.last()); got != "127.0.0.1:7200" {
			t.Fatalf("HTTP/2 %v: the node's address from its connection: %q, want 127.0.0.1:7200", h2, got)
		}
		if n := told.Load(); n != 1 {
			t.Fatalf("HTTP/2 %v: the nodes were told %d times, want once: the host did not change", h2, n)
		}
		l.seen(&net.TCPAddr{IP: net.ParseIP("192.168.10.21"), Port: 40000})
		if n := told.Load(); n != 2 {
			t.Fatalf("HTTP/2 %v: the nodes were told %d times, want twice: the host changed", h2, n)
		}
	}
}

// TestNodeReportsItsAddress: a node given no address reports the one its
// connection gives it, and reports again when that changes; a node given
// one reports it.
func TestNodeReportsItsAddress(t *testing.T) {
	reported := func(tn *testNode) string {
		tn.mu.Lock()
		defer tn.mu.Unlock()
		if len(tn.reports) == 0 {
			return ""
		}
		return tn.reports[len(tn.reports)-1].info.Address
	}
	local := &localAddress{}
	local.seen(&net.TCPAddr{IP: net.ParseIP("192.168.10.21"), Port: 40000})
	tn := startTestNodeAs(t, Node{Name: "n1", Type: "linux", Arch: "amd64"}, local, newFakeRuntime(), func(*Options) {})
	eventually(t, "the connection's host is reported", func() bool { return reported(tn) == "192.168.10.21:7200" })
	local.seen(&net.TCPAddr{IP: net.ParseIP("192.168.10.22"), Port: 40001})
	eventually(t, "the new host is reported", func() bool { return reported(tn) == "192.168.10.22:7200" })

	given := startTestNodeAs(t, Node{Name: "n1", Type: "linux", Arch: "amd64", Address: "edge-7.plant.local:8080"}, local, newFakeRuntime(), func(*Options) {})
	eventually(t, "the address given is reported", func() bool { return reported(given) == "edge-7.plant.local:8080" })
}
