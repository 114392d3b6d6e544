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

package hub

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
)

// authority is the hub's CA: it signs the hub's serving certificate and
// every node's client certificate.
type authority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
}

// loadAuthority reads the CA Secret, making it first when it is missing.
// Replicas that start together race to create it: the one the API server
// kept is read back, so all of them sign with one CA.
func loadAuthority(ctx context.Context, c client.Client, r client.Reader, namespace string, now time.Time) (*authority, error) {
	key := client.ObjectKey{Namespace: namespace, Name: hubapi.CASecret}
	s := &corev1.Secret{}
	err := r.Get(ctx, key, s)
	if apierrors.IsNotFound(err) {
		made, merr := newCASecret(key, now)
		if merr != nil {
			return nil, merr
		}
		err = c.Create(ctx, made, fieldOwner)
		if apierrors.IsAlreadyExists(err) {
			err = r.Get(ctx, key, s)
		} else {
			s = made
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the hub's CA (Secret %s): %w", key, err)
	}
	return parseAuthority(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
}

func newCASecret(key client.ObjectKey, now time.Time) (*corev1.Secret, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	// client-go's CA: ten years from now, valid from an hour back, so
	// that a device whose clock lags a little trusts it at once.
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "edgeplane-hub-ca", NotBefore: now.Add(-time.Hour)}, k)
	if err != nil {
		return nil, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(k)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}),
			corev1.TLSPrivateKeyKey: keyPEM,
		},
	}, nil
}

func parseAuthority(certPEM, keyPEM []byte) (*authority, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the hub's CA: %w", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, err
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok || !cert.IsCA {
		return nil, errors.New("the hub's CA: tls.crt must be a CA certificate and tls.key its signing key")
	}
	return &authority{cert: cert, key: signer, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})}, nil
}

// nodeCertificate signs csr as node's client certificate from notBefore
// for validity. The key is the device's: only its public half is here.
func (a *authority) nodeCertificate(node string, csr *x509.CertificateRequest, notBefore time.Time, validity time.Duration) ([]byte, error) {
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: node, Organization: []string{hubapi.NodeCertOrganization}},
		NotBefore:    notBefore,
		NotAfter:     notBefore.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, csr.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// servingCertificate makes the hub's own key and certificate for hosts
// (names or IPs), chained to the CA so that a device pinning the CA
// verifies it.
func (a *authority) servingCertificate(hosts []string, now time.Time, validity time.Duration) (*tls.Certificate, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "edgeplane-hub"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &k.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der, a.cert.Raw}, PrivateKey: k, Leaf: leaf}, nil
}

// parseCSR reads a PEM certificate request and checks its signature: the
// requester holds the key.
func parseCSR(p string) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode([]byte(p))
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("csr: want a PEM CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("csr: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("csr: %w", err)
	}
	return csr, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
