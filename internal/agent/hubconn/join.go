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
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
)

// callTimeout bounds each call to the hub, the handshake included.
const callTimeout = 30 * time.Second

// maxAnswer bounds what is read of an answer: a certificate or a Status.
const maxAnswer = 1 << 20

// JoinOptions say how a device joins the hub.
type JoinOptions struct {
	// Hub is the hub's URL, https://HOST:PORT.
	Hub string
	// Token is the one-time join token, ID.SECRET.
	Token string
	// CAHash pins the hub's CA: sha256: and the hex SHA-256 of its
	// SubjectPublicKeyInfo (hubapi.CAHash).
	CAHash string
	// Node, when set, is the node the device means to be: the hub refuses
	// a token of another node.
	Node string
	// Dir is where the identity is saved: the agent's state dir + /hub.
	Dir string
	// Timeout bounds the join; 0 means 30 s.
	Timeout time.Duration
}

// Refusal is the hub's answer refusing a join or a renewal: a Kubernetes
// Status, as the API server refuses.
type Refusal struct {
	// Op is join or renewal.
	Op   string
	Code int32
	// Reason is the cause's reason (one of hubapi.Refused*), else the
	// Status's reason (Unauthorized, Forbidden...).
	Reason  string
	Message string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("%s refused (%s): %s", r.Op, r.Reason, r.Message)
}

// CheckHubURL checks the hub's URL and returns it as https://HOST[:PORT].
func CheckHubURL(hub string) (string, error) {
	u, err := url.Parse(hub)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("--hub %q: want the hub's https://HOST:PORT, as kubectl edge node add prints it (the token travels only over TLS)", hub)
	}
	return "https://" + u.Host, nil
}

// Join joins the hub: it makes a key that never leaves the device, sends
// a certificate request for it with the token to the hub whose CA is
// pinned, and saves what the hub answers in o.Dir. A refusal (*Refusal)
// or any other failure writes nothing.
func Join(ctx context.Context, o JoinOptions) (*Identity, error) {
	server, err := CheckHubURL(o.Hub)
	if err != nil {
		return nil, err
	}
	if _, err := hubapi.ParseToken(o.Token); err != nil {
		return nil, fmt.Errorf("--token: %w", err)
	}
	if err := hubapi.CheckCAHash(o.CAHash); err != nil {
		return nil, err
	}
	if o.Dir == "" {
		return nil, errors.New("no directory to keep the node's identity in")
	}
	if o.Timeout <= 0 {
		o.Timeout = callTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	pin := strings.ToLower(o.CAHash)
	u, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	host := u.Hostname()

	key, keyPEM, csr, err := newKey(o.Node)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		DisableKeepAlives:   true,
		TLSClientConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			// The device has no CA yet, so the usual verification cannot
			// run: VerifyConnection does it against the pinned CA, before
			// a byte of the request (the token) is sent.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				return verifyPinned(cs.PeerCertificates, host, pin)
			},
		},
	}}
	var resp hubapi.JoinResponse
	for wait := time.Second; ; wait *= 2 {
		err := post(ctx, hc, server+hubapi.JoinPath, hubapi.JoinRequest{Token: o.Token, Node: o.Node, CSR: string(csr)}, &resp, "join")
		var r *Refusal
		// A hub that is busy (429) or cannot reach the API server now (503)
		// has not spent the token: the join is tried again while the
		// deadline allows.
		if !errors.As(err, &r) || (r.Code != http.StatusTooManyRequests && r.Code != http.StatusServiceUnavailable) {
			if err != nil {
				return nil, err
			}
			break
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(min(wait, 8*time.Second)):
		}
	}
	if resp.Node == "" || (o.Node != "" && resp.Node != o.Node) {
		return nil, fmt.Errorf("the hub joined node %q, not %q", resp.Node, o.Node)
	}
	ca, err := parseCert([]byte(resp.CACert))
	if err != nil {
		return nil, fmt.Errorf("the hub's CA: %w", err)
	}
	if got := hubapi.CAHash(ca); got != pin {
		return nil, fmt.Errorf("the hub answered CA %s, not the pinned %s", got, pin)
	}
	certPEM := []byte(resp.Certificate)
	if err := checkIssued(certPEM, key, ca, resp.Node, time.Now()); err != nil {
		return nil, err
	}
	id := &Identity{Server: server, Node: resp.Node, LeaseNamespace: resp.LeaseNamespace}
	if err := save(o.Dir, id, []byte(resp.CACert), keyPEM, certPEM); err != nil {
		return nil, fmt.Errorf("saving the node's identity in %s: %w", o.Dir, err)
	}
	return Load(o.Dir)
}

// save writes a joined identity; identity.json, which says the device
// joined, comes last.
func save(dir string, id *Identity, caPEM, keyPEM, certPEM []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, caFile), caPEM, 0o644); err != nil {
		return err
	}
	if err := savePair(dir, keyPEM, certPEM); err != nil {
		return err
	}
	b, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, identityFile), append(b, '\n'), 0o644)
}

// verifyPinned verifies the hub's chain against the CA in it whose hash is
// pin, for host.
func verifyPinned(certs []*x509.Certificate, host, pin string) error {
	if len(certs) == 0 {
		return errors.New("it sent no certificate")
	}
	var ca *x509.Certificate
	var offered []string
	for _, c := range certs {
		if !c.IsCA {
			continue
		}
		if h := hubapi.CAHash(c); h == pin {
			ca = c
			break
		} else {
			offered = append(offered, h)
		}
	}
	if ca == nil {
		if len(offered) == 0 {
			return fmt.Errorf("it sent no CA certificate with its own, so --ca-cert-hash %s cannot be checked", pin)
		}
		return fmt.Errorf("it offers CA %s, not %s (--ca-cert-hash): check the hash and the address, this may not be your hub", strings.Join(offered, ", "), pin)
	}
	roots, intermediates := x509.NewCertPool(), x509.NewCertPool()
	roots.AddCert(ca)
	for _, c := range certs[1:] {
		if c != ca {
			intermediates.AddCert(c)
		}
	}
	if _, err := certs[0].Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: intermediates, DNSName: host,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}); err != nil {
		return fmt.Errorf("its serving certificate does not verify against the pinned CA %s: %w", pin, err)
	}
	return nil
}

// newKey makes an ECDSA P-256 key and a certificate request for it.
func newKey(node string) (*ecdsa.PrivateKey, []byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: node}}, key)
	if err != nil {
		return nil, nil, nil, err
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}), nil
}

// checkIssued checks that certPEM is a client certificate of key for node
// from ca, not expired at now. Its start is not checked against now: a
// device's clock may run behind the hub's.
func checkIssued(certPEM []byte, key *ecdsa.PrivateKey, ca *x509.Certificate, node string, now time.Time) error {
	cert, err := parseCert(certPEM)
	if err != nil {
		return fmt.Errorf("the hub's certificate: %w", err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return errors.New("the hub's certificate is not of the key the device sent")
	}
	if cert.Subject.CommonName != node {
		return fmt.Errorf("the hub's certificate names %q, not node %q", cert.Subject.CommonName, node)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: cert.NotBefore, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("the hub's certificate: %w", err)
	}
	if !now.Before(cert.NotAfter) {
		return fmt.Errorf("the hub's certificate expired at %s (the device's clock says %s)", cert.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// post sends in to the hub's URL to and decodes a 200 answer into out; another answer
// is a *Refusal when it is a Status.
func post(ctx context.Context, hc *http.Client, to string, in, out any, op string) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, to, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%s: the hub at %s: %w", op, req.URL.Host, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s: reading the hub's answer: %w", op, err)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s: the hub's answer: %w", op, err)
		}
		return nil
	}
	var st metav1.Status
	if json.Unmarshal(b, &st) != nil || st.Kind != "Status" {
		return fmt.Errorf("%s: the hub answered %s: %.200s", op, resp.Status, b)
	}
	r := &Refusal{Op: op, Code: st.Code, Reason: string(st.Reason), Message: st.Message}
	if st.Details != nil && len(st.Details.Causes) > 0 && st.Details.Causes[0].Type != "" {
		r.Reason = string(st.Details.Causes[0].Type)
	}
	if r.Code == 0 {
		r.Code = int32(resp.StatusCode)
	}
	return r
}
