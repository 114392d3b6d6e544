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
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
)

// joined is a device joined to a new test hub, and the agent's client.
func joined(t *testing.T) (*testHub, *Identity, *http.Client) {
	t.Helper()
	h := newTestHub(t, hubOptions{})
	id, err := Join(context.Background(), h.joinOptions(filepath.Join(t.TempDir(), "hub")))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := id.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h, id, hc
}

// whoami is the client certificate the hub saw, as "CN serial".
func whoami(t *testing.T, h *testHub, hc *http.Client) string {
	t.Helper()
	resp, err := hc.Get(h.srv.URL + "/whoami")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("whoami: %s: %s", resp.Status, b)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("whoami over %s: the agent's client should keep HTTP/2", resp.Proto)
	}
	return string(b)
}

func certName(id *Identity) string {
	c := id.Certificate()
	return c.Subject.CommonName + " " + c.SerialNumber.String()
}

func TestRESTConfigPresentsCertificate(t *testing.T) {
	h, id, hc := joined(t)
	if got, want := whoami(t, h, hc), certName(id); got != want {
		t.Fatalf("the hub saw %q, want %q", got, want)
	}
	cfg, _ := id.RESTConfig()
	if cfg.Host != h.srv.URL || len(cfg.CAData) > 0 || cfg.CAFile != "" || len(cfg.CertData) > 0 || cfg.CertFile != "" {
		t.Errorf("config %+v: TLS settings belong to its transport", cfg)
	}
}

// renewer runs KeepRenewed on a fake clock until the test ends.
func renewer(t *testing.T, h *testHub, id *Identity) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		id.KeepRenewed(ctx, h.clock, testr.New(t))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// stepUntil steps the fake clock by step each time the renewer waits,
// until cond holds, and returns once the renewer waits again.
func stepUntil(t *testing.T, clk *clocktesting.FakeClock, step, limit time.Duration, cond func() bool) {
	t.Helper()
	end := clk.Now().Add(limit)
	for {
		waitForTimer(t, clk)
		if cond() {
			return
		}
		if clk.Now().After(end) {
			t.Fatalf("not within %s", limit)
		}
		clk.Step(step)
	}
}

func waitForTimer(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	for start := time.Now(); !clk.HasWaiters(); time.Sleep(50 * time.Microsecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the renewer does not wait")
		}
	}
}

// fakeAfter says whether the fake clock passed a share of the
// certificate's lifetime.
func fakeAfter(h *testHub, cert *Identity, share float64) func() bool {
	c := cert.Certificate()
	at := c.NotBefore.Add(time.Duration(share * float64(c.NotAfter.Sub(c.NotBefore))))
	return func() bool { return !h.clock.Now().Before(at) }
}

func attempted(h *testHub, n int) func() bool {
	return func() bool { return len(h.attempts()) >= n }
}

func readPair(t *testing.T, id *Identity) []byte {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(id.dir, keyFile))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := os.ReadFile(filepath.Join(id.dir, certFile))
	if err != nil {
		t.Fatal(err)
	}
	return append(key, cert...)
}

// The certificate is renewed 70 to 90% into its lifetime, and the agent's
// client presents the new one without a restart.
func TestKeepRenewed(t *testing.T) {
	h, id, hc := joined(t)
	old, oldFiles := id.Certificate(), readPair(t, id)
	before := whoami(t, h, hc)
	// A watch keeps the HTTP/2 connection busy: the renewal has to close
	// it, or every request would go on over it with the old certificate.
	watch, err := hc.Get(h.srv.URL + "/watch")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Body.Close() }()
	line := make([]byte, len("watching\n"))
	if _, err := io.ReadFull(watch.Body, line); err != nil {
		t.Fatal(err)
	}
	renewer(t, h, id)

	const step = time.Minute
	stepUntil(t, h.clock, time.Hour, testLifetime, fakeAfter(h, id, 0.69))
	if n := len(h.attempts()); n != 0 {
		t.Fatalf("%d renewals before 69%% of the lifetime", n)
	}
	stepUntil(t, h.clock, step, testLifetime, attempted(h, 1))
	at := h.attempts()[0].Sub(old.NotBefore)
	if share := float64(at) / float64(old.NotAfter.Sub(old.NotBefore)); share < 0.7 || at > time.Duration(0.9*float64(testLifetime))+step {
		t.Fatalf("renewed at %.3f of the lifetime, want 0.7 to 0.9", share)
	}

	renewed := id.Certificate()
	if renewed.Equal(old) || renewed.Subject.CommonName != testNode {
		t.Fatalf("certificate not renewed: %s", certName(id))
	}
	if old.PublicKey.(*ecdsa.PublicKey).Equal(renewed.PublicKey) {
		t.Error("the renewal kept the old key")
	}
	cut := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, watch.Body); cut <- err }()
	select {
	case err := <-cut:
		if err == nil {
			t.Error("the watch ended without an error")
		}
	case <-time.After(10 * time.Second):
		_ = watch.Body.Close()
		t.Fatal("the watch goes on over the connection of the old certificate")
	}
	if after := whoami(t, h, hc); after == before || after != certName(id) {
		t.Errorf("the hub saw %q after the renewal, %q before; want %q", after, before, certName(id))
	}
	if bytes.Equal(readPair(t, id), oldFiles) {
		t.Error("the renewed pair was not saved")
	}
	loaded, err := Load(id.dir)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Certificate().Equal(renewed) {
		t.Error("Load does not find the renewed certificate")
	}
	if fi, _ := os.Stat(filepath.Join(id.dir, keyFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("renewed key of mode %o", fi.Mode().Perm())
	}
}

// While the hub cannot be reached, the agent goes on with its certificate,
// the pair on disk stays, and renewals are tried after a growing back-off.
func TestKeepRenewedOffline(t *testing.T) {
	h, id, hc := joined(t)
	before, files := whoami(t, h, hc), readPair(t, id)
	h.set(func(h *testHub) { h.down = true })
	renewer(t, h, id)

	stepUntil(t, h.clock, time.Hour, testLifetime, fakeAfter(h, id, 0.69))
	stepUntil(t, h.clock, time.Minute, testLifetime, attempted(h, 1))
	const step = 50 * time.Millisecond
	stepUntil(t, h.clock, step, time.Minute, attempted(h, 5))
	at := h.attempts()
	for i := 1; i < len(at); i++ {
		gap, base := at[i].Sub(at[i-1]), retryBase<<(i-1)
		if gap < base/2 || gap > base+step {
			t.Errorf("attempt %d came %s after the one before, want %s to %s", i+1, gap, base/2, base)
		}
	}
	if !bytes.Equal(readPair(t, id), files) {
		t.Error("the pair on disk changed while the hub could not be reached")
	}
	if entries, _ := os.ReadDir(id.dir); len(entries) != 4 {
		t.Errorf("%d files in %s, want 4", len(entries), id.dir)
	}
	if got := whoami(t, h, hc); got != before {
		t.Errorf("the agent presents %q, want its current %q", got, before)
	}

	// The hub comes back: the next try renews.
	h.set(func(h *testHub) { h.down = false })
	n := len(at)
	stepUntil(t, h.clock, time.Second, retryMax, func() bool { return len(h.attempts()) > n })
	if bytes.Equal(readPair(t, id), files) || whoami(t, h, hc) == before {
		t.Error("not renewed once the hub came back")
	}
}

// A refusal is logged and tried again at the back-off's cap.
func TestKeepRenewedRefused(t *testing.T) {
	h, id, _ := joined(t)
	files := readPair(t, id)
	h.set(func(h *testHub) {
		h.refuse = refusal(403, metav1.StatusReasonForbidden, "CertificateRevoked", "node edge-01's credentials were revoked")
	})
	renewer(t, h, id)
	stepUntil(t, h.clock, time.Hour, testLifetime, fakeAfter(h, id, 0.69))
	stepUntil(t, h.clock, time.Minute, testLifetime, attempted(h, 1))
	const step = 10 * time.Second
	stepUntil(t, h.clock, step, time.Hour, attempted(h, 2))
	at := h.attempts()
	if gap := at[1].Sub(at[0]); gap < retryMax/2 || gap > retryMax+step {
		t.Errorf("tried again %s after a refusal, want %s to %s", gap, retryMax/2, retryMax)
	}
	if !bytes.Equal(readPair(t, id), files) {
		t.Error("the pair on disk changed after a refusal")
	}
}
