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

package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"

	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// The files through which the server process gets its key material.
const (
	caFile   = "ca.crt"
	certFile = "tls.crt"
	keyFile  = "tls.key"
)

// authority is the CA that issues the server's certificate and one per
// device, as the hub issues one per node.
type authority struct{ *testenv.CA }

func newAuthority() (*authority, error) {
	ca, err := testenv.NewCA("channelcost CA")
	return &authority{ca}, err
}

// writeServerFiles writes the CA and a server certificate and key into
// dir for the server process.
func (a *authority) writeServerFiles(dir string) error {
	if _, _, err := a.IssueFiles(testenv.Leaf{CommonName: "channelcost server", DNSNames: []string{"localhost"}}, dir, "tls"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, caFile), a.PEM, 0o600)
}

// serverTLS is the server's TLS config from the files in dir: it requires
// a device certificate the CA issued.
func serverTLS(dir string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, certFile), filepath.Join(dir, keyFile))
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(dir, caFile))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New(caFile + ": no certificate")
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		NextProtos:   []string{"h2", "http/1.1"},
	}, nil
}

// clientTLS is a device's TLS config: its own certificate, the CA as root.
func (a *authority) clientTLS(node string) (*tls.Config, error) {
	certPEM, keyPEM, err := a.Issue(testenv.Leaf{CommonName: node, Client: true})
	if err != nil {
		return nil, err
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{c}, RootCAs: a.Pool()}, nil
}
