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
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
)

func TestJoin(t *testing.T) {
	for _, tc := range []struct {
		name, node, wantCN string
	}{
		{"node named", testNode, testNode},
		{"node the token's", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHub(t, hubOptions{})
			dir := filepath.Join(t.TempDir(), "hub")
			o := h.joinOptions(dir)
			o.Node = tc.node
			id, err := Join(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if id.Server != h.srv.URL || id.Node != testNode || id.LeaseNamespace != testLeaseNS {
				t.Errorf("identity = %+v", id)
			}
			if cn := id.Certificate().Subject.CommonName; cn != testNode {
				t.Errorf("certificate of %q", cn)
			}

			// The device sent a request for its key, never the key.
			var body string
			h.set(func(h *testHub) { body = h.joinBody })
			var req hubapi.JoinRequest
			if err := json.Unmarshal([]byte(body), &req); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(body, "PRIVATE KEY") || req.Token != testToken || req.Node != tc.node {
				t.Errorf("join request %s", body)
			}
			block, _ := pem.Decode([]byte(req.CSR))
			csr, err := x509.ParseCertificateRequest(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if csr.Subject.CommonName != tc.wantCN {
				t.Errorf("CSR of %q, want %q", csr.Subject.CommonName, tc.wantCN)
			}

			for name, want := range map[string]os.FileMode{".": 0o700, keyFile: 0o600, certFile: 0o644, caFile: 0o644, identityFile: 0o644} {
				fi, err := os.Stat(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != want {
					t.Errorf("%s: mode %o, want %o", name, got, want)
				}
			}
			var saved map[string]string
			b, _ := os.ReadFile(filepath.Join(dir, identityFile))
			if err := json.Unmarshal(b, &saved); err != nil {
				t.Fatal(err)
			}
			if saved["server"] != h.srv.URL || saved["node"] != testNode || saved["leaseNamespace"] != testLeaseNS {
				t.Errorf("identity.json = %s", b)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 4 {
				t.Errorf("%d files in %s, want 4 (no temporary file left)", len(entries), dir)
			}

			loaded, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if loaded.Server != id.Server || loaded.Node != id.Node || !loaded.Certificate().Equal(id.Certificate()) ||
				!csr.PublicKey.(*ecdsa.PublicKey).Equal(loaded.Certificate().PublicKey) {
				t.Errorf("loaded %+v, joined %+v", loaded, id)
			}
		})
	}
}

// The hub's CA is pinned: a hub that cannot show it is left before the
// token is sent.
func TestJoinPinned(t *testing.T) {
	other := newTestCA(t, "someone else's")
	for _, tc := range []struct {
		name    string
		hub     hubOptions
		pin     func(h *testHub) string
		wantErr string
	}{
		{"pin in capitals", hubOptions{}, func(h *testHub) string { return "sha256:" + strings.ToUpper(strings.TrimPrefix(h.pin(), "sha256:")) }, ""},
		{"wrong pin", hubOptions{}, func(*testHub) string { return hubapi.CAHash(other.cert) }, "offers CA "},
		{"another CA's hub", hubOptions{ca: other}, func(h *testHub) string { return h.pin() }, "offers CA " + hubapi.CAHash(other.cert)},
		{"no CA in the chain", hubOptions{bare: true}, func(h *testHub) string { return h.pin() }, "sent no CA certificate"},
		{"certificate of another address", hubOptions{otherIP: true}, func(h *testHub) string { return h.pin() }, "does not verify against the pinned CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHub(t, tc.hub)
			dir := filepath.Join(t.TempDir(), "hub")
			o := h.joinOptions(dir)
			o.CAHash = tc.pin(h)
			_, err := Join(context.Background(), o)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			t.Log(err)
			if tc.name == "wrong pin" && !strings.Contains(err.Error(), h.pin()) {
				t.Errorf("err = %v: does not name the hash the hub offered, %s", err, h.pin())
			}
			if n := h.requestCount(); n != 0 {
				t.Errorf("%d requests reached the hub", n)
			}
			assertMissing(t, dir)
		})
	}
}

func TestJoinRefused(t *testing.T) {
	for _, tc := range []struct {
		status *metav1.Status
		want   string
	}{
		{refusal(401, metav1.StatusReasonUnauthorized, hubapi.RefusedTokenUsed, "join token abcdef was already used"), "join refused (TokenUsed): join token abcdef was already used"},
		{refusal(403, metav1.StatusReasonForbidden, hubapi.RefusedWrongNode, "join token abcdef joins node edge-02, not edge-01"), "join refused (WrongNode): join token abcdef joins node edge-02, not edge-01"},
		{refusal(400, metav1.StatusReasonBadRequest, hubapi.RefusedBadRequest, "no CSR"), "join refused (BadRequest): no CSR"},
		{&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status"}, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "no"}, "join refused (Forbidden): no"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			h := newTestHub(t, hubOptions{})
			h.set(func(h *testHub) { h.refuse = tc.status })
			dir := filepath.Join(t.TempDir(), "hub")
			_, err := Join(context.Background(), h.joinOptions(dir))
			var r *Refusal
			if !errors.As(err, &r) || err.Error() != tc.want || r.Code != tc.status.Code {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
			assertMissing(t, dir)
		})
	}
}

func TestJoinBadOptions(t *testing.T) {
	h := newTestHub(t, hubOptions{})
	for _, tc := range []struct {
		name    string
		change  func(o *JoinOptions)
		wantErr string
	}{
		{"http", func(o *JoinOptions) { o.Hub = strings.Replace(o.Hub, "https:", "http:", 1) }, "--hub"},
		{"no host", func(o *JoinOptions) { o.Hub = "https:///" }, "--hub"},
		{"a path", func(o *JoinOptions) { o.Hub += "/api" }, "--hub"},
		{"token", func(o *JoinOptions) { o.Token = "abcdef" }, "--token"},
		{"hash", func(o *JoinOptions) { o.CAHash = "sha1:00" }, "--ca-cert-hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "hub")
			o := h.joinOptions(dir)
			tc.change(&o)
			if _, err := Join(context.Background(), o); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %s", err, tc.wantErr)
			}
			assertMissing(t, dir)
		})
	}
	if n := h.requestCount(); n != 0 {
		t.Errorf("%d requests reached the hub", n)
	}
}

func TestLoadNotJoined(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "has not joined") || !strings.Contains(err.Error(), "edge-agent join") {
		t.Fatalf("err = %v", err)
	}
}

// A renewal cut short by a crash is finished, or dropped, at the next
// start; never a key without its certificate.
func TestLoadFinishesRotation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		next    func(dir string, key, cert []byte)
		renewed bool
	}{
		{"new key only", func(dir string, key, _ []byte) { write(t, filepath.Join(dir, keyFile+nextSuffix), key) }, false},
		{"new pair written", func(dir string, key, cert []byte) {
			write(t, filepath.Join(dir, keyFile+nextSuffix), key)
			write(t, filepath.Join(dir, certFile+nextSuffix), cert)
		}, true},
		{"new key renamed", func(dir string, key, cert []byte) {
			write(t, filepath.Join(dir, keyFile), key)
			write(t, filepath.Join(dir, certFile+nextSuffix), cert)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHub(t, hubOptions{})
			dir := filepath.Join(t.TempDir(), "hub")
			id, err := Join(context.Background(), h.joinOptions(dir))
			if err != nil {
				t.Fatal(err)
			}
			_, keyPEM, csr, err := newKey(testNode)
			if err != nil {
				t.Fatal(err)
			}
			cert, err := h.sign(string(csr), testNode)
			if err != nil {
				t.Fatal(err)
			}
			tc.next(dir, keyPEM, []byte(cert))
			loaded, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if renewed := !loaded.Certificate().Equal(id.Certificate()); renewed != tc.renewed {
				t.Errorf("renewed = %v, want %v", renewed, tc.renewed)
			}
			for _, f := range []string{keyFile + nextSuffix, certFile + nextSuffix} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s left", f)
				}
			}
		})
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// assertMissing fails unless dir was never made.
func assertMissing(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was made (%v)", dir, err)
	}
}
