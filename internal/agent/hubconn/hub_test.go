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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
)

const (
	testToken    = "abcdef.0123456789abcdef"
	testNode     = "edge-01"
	testLeaseNS  = "edgeplane-node-lease"
	testLifetime = 100 * time.Hour
)

// testCA is a CA made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// newTestCA makes a CA with client-go's helper, valid from an hour back.
func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key := newTestKey(t)
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name, NotBefore: time.Now().Add(-time.Hour)}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})}
}

func newTestKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

var serial = struct {
	sync.Mutex
	n int64
}{n: 100}

// issue signs a certificate of pub from tmpl's fields.
func (ca *testCA) issue(t *testing.T, tmpl *x509.Certificate, pub any) []byte {
	t.Helper()
	serial.Lock()
	serial.n++
	tmpl.SerialNumber = big.NewInt(serial.n)
	serial.Unlock()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// serving is a serving certificate for 127.0.0.1 from ca, with ca's own
// certificate in the chain as the hub sends it (unless bare).
func (ca *testCA) serving(t *testing.T, ips []net.IP, bare bool) tls.Certificate {
	key := newTestKey(t)
	der := ca.issue(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "hub"}, IPAddresses: ips, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, &key.PublicKey)
	chain := [][]byte{der, ca.cert.Raw}
	if bare {
		chain = chain[:1]
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key}
}

// testHub serves the hub's two endpoints and /whoami, which names the
// client certificate it was called with. Client certificates are checked
// at the fake clock's time, as the hub would at its own.
type testHub struct {
	t     *testing.T
	ca    *testCA
	clock *clocktesting.FakeClock
	srv   *httptest.Server

	mu       sync.Mutex
	requests int
	joinBody string
	refuse   *metav1.Status // answers every join and renewal when set
	down     bool           // renewals fail as if the hub were cut off
	renewals []time.Time    // fake times of the renewal attempts
}

type hubOptions struct {
	ca      *testCA // serving certificate's CA; default the hub's
	bare    bool    // no CA in the chain
	otherIP bool    // serving certificate for another address
}

func newTestHub(t *testing.T, o hubOptions) *testHub {
	t.Helper()
	h := &testHub{t: t, ca: newTestCA(t, "edgeplane-hub-ca"), clock: clocktesting.NewFakeClock(time.Now())}
	if o.ca == nil {
		o.ca = h.ca
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1)}
	if o.otherIP {
		ips = []net.IP{net.IPv4(10, 0, 0, 1)}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+hubapi.JoinPath, h.join)
	mux.HandleFunc("POST "+hubapi.RenewPath, h.renew)
	mux.HandleFunc("GET /whoami", func(w http.ResponseWriter, r *http.Request) {
		if cert := h.client(w, r); cert != nil {
			fmt.Fprintf(w, "%s %s", cert.Subject.CommonName, cert.SerialNumber)
		}
	})
	// /watch holds its answer open, as a watch does, until the client
	// goes away.
	mux.HandleFunc("GET /watch", func(w http.ResponseWriter, r *http.Request) {
		if h.client(w, r) == nil {
			return
		}
		_, _ = io.WriteString(w, "watching\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.requests++
		h.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	h.srv.EnableHTTP2 = true
	h.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	h.srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{o.ca.serving(t, ips, o.bare)},
		ClientAuth:   tls.RequestClientCert,
		NextProtos:   []string{"h2", "http/1.1"},
	}
	h.srv.StartTLS()
	t.Cleanup(h.srv.Close)
	return h
}

func (h *testHub) pin() string { return hubapi.CAHash(h.ca.cert) }

func (h *testHub) status(w http.ResponseWriter, st *metav1.Status) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}

func refusal(code int32, reason metav1.StatusReason, cause, msg string) *metav1.Status {
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: code, Reason: reason, Message: msg,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseType(cause), Message: msg}}},
	}
}

// client is the verified client certificate of r, or nil after a 401.
func (h *testHub) client(w http.ResponseWriter, r *http.Request) *x509.Certificate {
	if len(r.TLS.PeerCertificates) > 0 {
		roots := x509.NewCertPool()
		roots.AddCert(h.ca.cert)
		cert := r.TLS.PeerCertificates[0]
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: h.clock.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
			return cert
		}
	}
	h.status(w, refusal(401, metav1.StatusReasonUnauthorized, "CertificateInvalid", "no valid node certificate"))
	return nil
}

// sign answers a certificate of the CSR in pemCSR for node.
func (h *testHub) sign(pemCSR, node string) (string, error) {
	block, _ := pem.Decode([]byte(pemCSR))
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "", fmt.Errorf("no CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", err
	}
	if err := csr.CheckSignature(); err != nil {
		return "", err
	}
	now := h.clock.Now()
	der := h.ca.issue(h.t, &x509.Certificate{
		Subject: pkix.Name{CommonName: node, Organization: []string{hubapi.NodeCertOrganization}}, NotBefore: now, NotAfter: now.Add(testLifetime),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, csr.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

func (h *testHub) join(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req hubapi.JoinRequest
	if err := json.Unmarshal(body, &req); err != nil {
		h.status(w, refusal(400, metav1.StatusReasonBadRequest, hubapi.RefusedBadRequest, err.Error()))
		return
	}
	h.mu.Lock()
	h.joinBody = string(body)
	refuse := h.refuse
	h.mu.Unlock()
	if refuse != nil {
		h.status(w, refuse)
		return
	}
	if req.Token != testToken {
		h.status(w, refusal(401, metav1.StatusReasonUnauthorized, hubapi.RefusedTokenUnknown, "unknown token"))
		return
	}
	node := req.Node
	if node == "" {
		node = testNode
	}
	cert, err := h.sign(req.CSR, node)
	if err != nil {
		h.status(w, refusal(400, metav1.StatusReasonBadRequest, hubapi.RefusedBadRequest, err.Error()))
		return
	}
	_ = json.NewEncoder(w).Encode(hubapi.JoinResponse{Node: node, Certificate: cert, CACert: string(h.ca.pem), LeaseNamespace: testLeaseNS})
}

func (h *testHub) renew(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.renewals = append(h.renewals, h.clock.Now())
	down, refuse := h.down, h.refuse
	h.mu.Unlock()
	if down {
		panic(http.ErrAbortHandler) // the connection is cut
	}
	if refuse != nil {
		h.status(w, refuse)
		return
	}
	cert := h.client(w, r)
	if cert == nil {
		return
	}
	var req hubapi.RenewRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		h.status(w, refusal(400, metav1.StatusReasonBadRequest, hubapi.RefusedBadRequest, err.Error()))
		return
	}
	signed, err := h.sign(req.CSR, cert.Subject.CommonName)
	if err != nil {
		h.status(w, refusal(400, metav1.StatusReasonBadRequest, hubapi.RefusedBadRequest, err.Error()))
		return
	}
	_ = json.NewEncoder(w).Encode(hubapi.RenewResponse{Certificate: signed})
}

func (h *testHub) set(f func(h *testHub)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

func (h *testHub) requestCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests
}

func (h *testHub) attempts() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.renewals...)
}

func (h *testHub) joinOptions(dir string) JoinOptions {
	return JoinOptions{Hub: h.srv.URL, Token: testToken, CAHash: h.pin(), Node: testNode, Dir: dir, Timeout: 10 * time.Second}
}
