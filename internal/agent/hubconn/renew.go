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
	"crypto/x509"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"

	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
)

const (
	// While the hub cannot be reached, a renewal is tried again after a
	// back-off that doubles from retryBase to retryMax, with jitter so
	// that a fleet cut off together does not come back in one storm.
	retryBase = time.Second
	retryMax  = 5 * time.Minute
	// maxSleep bounds one wait: a device without a real-time clock may
	// set its clock long after the wait began.
	maxSleep = time.Hour
)

// KeepRenewed renews the node's certificate, with a new key each time, at
// a jittered 70 to 90% of its lifetime, as client-go's certificate manager
// does, until ctx ends. While the hub cannot be reached or refuses, the
// agent goes on with the current certificate: a node runs its services
// offline too.
func (id *Identity) KeepRenewed(ctx context.Context, clk clock.Clock, log logr.Logger) {
	hc := &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		// A renewal is months from the last: no connection is worth
		// keeping, and a new one presents the current certificate.
		DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{
			MinVersion:           tls.VersionTLS12,
			RootCAs:              id.roots(),
			GetClientCertificate: id.creds.getClientCertificate,
		},
	}}
	cert := id.Certificate()
	renewAt := renewalTime(cert)
	log.Info("Node certificate", "node", id.Node, "notAfter", cert.NotAfter, "renewAt", renewAt)
	failed := 0
	var retryAt time.Time
	var retry wait.Backoff
	for {
		next := renewAt
		if failed > 0 {
			next = retryAt
		}
		if d := next.Sub(clk.Now()); d > 0 {
			if !sleep(ctx, clk, min(d, maxSleep)) {
				return
			}
			continue
		}
		err := id.renew(ctx, hc, clk.Now())
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			failed, cert = 0, id.Certificate()
			renewAt = renewalTime(cert)
			log.Info("Renewed the node certificate", "notAfter", cert.NotAfter, "renewAt", renewAt)
			continue
		}
		if failed == 0 {
			retry = backoff()
		}
		failed++
		delay := retry.Step()
		var r *Refusal
		if errors.As(err, &r) && refused(r.Code) {
			// The longest wait: another try soon would be refused alike.
			delay = wait.Jitter(retryMax/2, 1)
			log.Error(err, "The hub refused to renew the node certificate; the agent goes on with the current one", "notAfter", cert.NotAfter, "retryIn", delay.Round(time.Second).String())
		} else {
			log.Info("Cannot renew the node certificate now; the agent goes on with the current one", "error", err.Error(), "attempts", failed, "notAfter", cert.NotAfter, "retryIn", delay.Round(time.Millisecond).String())
		}
		if now := clk.Now(); !now.Before(cert.NotAfter) {
			log.Error(nil, "The node certificate has expired: the hub refuses it, and it cannot be renewed. Issue a join token (kubectl edge node token NODE) and run edge-agent join again", "node", id.Node, "notAfter", cert.NotAfter)
		}
		retryAt = clk.Now().Add(delay)
	}
}

// renew asks the hub for a certificate of a new key, saves the pair and
// only then serves it.
func (id *Identity) renew(ctx context.Context, hc *http.Client, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	key, keyPEM, csr, err := newKey(id.Node)
	if err != nil {
		return err
	}
	var resp hubapi.RenewResponse
	if err := post(ctx, hc, id.Server+hubapi.RenewPath, hubapi.RenewRequest{CSR: string(csr)}, &resp, "renewal"); err != nil {
		return err
	}
	certPEM := []byte(resp.Certificate)
	if err := checkIssued(certPEM, key, id.ca, id.Node, now); err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	if err := savePair(id.dir, keyPEM, certPEM); err != nil {
		return err
	}
	id.creds.set(&pair)
	return nil
}

func (id *Identity) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(id.ca)
	return p
}

// refused says whether an answer refuses the node rather than fails for
// now: another try soon would be refused the same way.
func refused(code int32) bool {
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
}

// renewalTime is a jittered 70 to 90% into the certificate's lifetime.
func renewalTime(cert *x509.Certificate) time.Time {
	life := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotBefore.Add(time.Duration(float64(life) * (0.7 + 0.2*rand.Float64())))
}

// backoff is the wait before each renewal while renewals fail:
// retryBase doubled per failure up to retryMax, each wait drawn from the
// upper half of its step ("equal jitter": from half of it, with up to as
// much again).
func backoff() wait.Backoff {
	return wait.Backoff{Duration: retryBase / 2, Factor: 2, Jitter: 1, Steps: math.MaxInt32, Cap: retryMax / 2}
}

// sleep waits d on clk; false when ctx ended first.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
