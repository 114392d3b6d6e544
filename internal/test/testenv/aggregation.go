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

package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// CA is a certificate authority for tests: the front-proxy CA of an
// aggregating kube-apiserver, or the CA of a facade's serving certificate.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA's certificate.
	PEM []byte
}

// NewCA makes a CA (client-go's, valid from an hour back).
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	c, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name, NotBefore: time.Now().Add(-time.Hour)}, key)
	if err != nil {
		return nil, err
	}
	return &CA{cert: c, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})}, nil
}

// Pool is a certificate pool that trusts the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Leaf is what a certificate the CA issues is for.
type Leaf struct {
	CommonName string
	// Organization, if set, is the subject's organization (a node
	// certificate's group).
	Organization string
	// Client makes a client certificate, else a serving one for DNSNames
	// and 127.0.0.1.
	Client   bool
	DNSNames []string
}

// Issue signs a certificate for leaf and returns it and its key as PEM.
func (ca *CA) Issue(leaf Leaf) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: leaf.CommonName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if leaf.Organization != "" {
		tmpl.Subject.Organization = []string{leaf.Organization}
	}
	if leaf.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.DNSNames, tmpl.IPAddresses = leaf.DNSNames, []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// IssueFiles issues a certificate for leaf into dir/name.crt and
// dir/name.key and returns the two paths.
func (ca *CA) IssueFiles(leaf Leaf, dir, name string) (certFile, keyFile string, err error) {
	c, k, err := ca.Issue(leaf)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, c, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, k, 0o600)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// FrontProxyClientName is the common name of the certificate the
// aggregation layer presents to aggregated API servers, and the one name
// they allow.
const FrontProxyClientName = "front-proxy-client"

// ConfigureAggregation sets up env's kube-apiserver, before it starts, for
// API aggregation as a real cluster's is: a front-proxy CA, the client
// certificate the aggregator proxies with, the allowed name and the
// identity headers, which kube-apiserver publishes in
// kube-system/extension-apiserver-authentication. The files go to dir.
func ConfigureAggregation(env *envtest.Environment, dir string) (*CA, error) {
	ca, err := NewCA("front-proxy-ca")
	if err != nil {
		return nil, err
	}
	caFile := filepath.Join(dir, "front-proxy-ca.crt")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		return nil, err
	}
	certFile, keyFile, err := ca.IssueFiles(Leaf{CommonName: FrontProxyClientName, Client: true}, dir, "front-proxy-client")
	if err != nil {
		return nil, err
	}
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("requestheader-client-ca-file", caFile)
	args.Set("requestheader-allowed-names", FrontProxyClientName)
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("proxy-client-cert-file", certFile)
	args.Set("proxy-client-key-file", keyFile)
	return ca, nil
}

// APIServiceGVK is the kind of an aggregated API's registration.
var APIServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// RegisterAPIService registers group/version as served by a backend on
// localhost:port, as make dev does: an ExternalName Service to localhost
// (the aggregator resolves it to its externalName) and an APIService
// trusting caBundle (none given: left for the backend to set). The
// backend's certificate must name <service>.<namespace>.svc, the server
// name the aggregator asks for.
func RegisterAPIService(ctx context.Context, c client.Client, group, version, namespace, service string, port int, caBundle []byte) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: service},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	if err := c.Create(ctx, svc); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	as := &unstructured.Unstructured{}
	as.SetGroupVersionKind(APIServiceGVK)
	as.SetName(version + "." + group)
	spec := map[string]any{
		"group": group, "version": version, "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
		"service": map[string]any{"namespace": namespace, "name": service, "port": int64(port)},
	}
	if len(caBundle) > 0 {
		spec["caBundle"] = base64.StdEncoding.EncodeToString(caBundle)
	}
	as.Object["spec"] = spec
	return c.Create(ctx, as)
}

// APIServiceAvailable reports the status and message of an APIService's
// Available condition.
func APIServiceAvailable(ctx context.Context, c client.Reader, name string) (status, message string, err error) {
	as := &unstructured.Unstructured{}
	as.SetGroupVersionKind(APIServiceGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: name}, as); err != nil {
		return "", "", err
	}
	conds, _, _ := unstructured.NestedSlice(as.Object, "status", "conditions")
	for _, cond := range conds {
		m, _ := cond.(map[string]any)
		if m["type"] == "Available" {
			s, _ := m["status"].(string)
			msg, _ := m["message"].(string)
			return s, msg, nil
		}
	}
	return "", "", nil
}
