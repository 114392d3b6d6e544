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

// Package hubconn is the device's side of the edge hub: it joins the hub
// with a one-time token, keeps the node's key and certificate under the
// agent's state directory, serves them to the agent's API client and
// renews them before they expire.
package hubconn

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Files of a joined device, in the directory given to Join and Load.
const (
	keyFile      = "node.key"
	certFile     = "node.crt"
	caFile       = "ca.crt"
	identityFile = "identity.json"
	// nextSuffix marks a new key and certificate, each complete, written
	// beside the current pair before they replace it.
	nextSuffix = ".next"
)

// Identity is a device that joined the hub: where the hub is, the node it
// plays there, and the node's credentials.
type Identity struct {
	// Server is the hub's URL, https://HOST:PORT.
	Server string `json:"server"`
	// Node is the node's name, the common name of its certificate.
	Node string `json:"node"`
	// LeaseNamespace is where the node's Lease is, as the hub names it.
	LeaseNamespace string `json:"leaseNamespace"`

	dir   string
	caPEM []byte
	ca    *x509.Certificate
	creds *credentials
}

// Joined says whether dir holds the identity of a device that joined.
func Joined(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, identityFile))
	return err == nil
}

// Load reads the identity Join saved in dir.
func Load(dir string) (*Identity, error) {
	b, err := os.ReadFile(filepath.Join(dir, identityFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("this device has not joined the hub (no %s): run edge-agent join --hub https://HOST:PORT --token ID.SECRET --ca-cert-hash sha256:..., as kubectl edge node add prints it", filepath.Join(dir, identityFile))
	}
	if err != nil {
		return nil, err
	}
	id := &Identity{dir: dir}
	if err := json.Unmarshal(b, id); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, identityFile), err)
	}
	if id.Server == "" || id.Node == "" {
		return nil, fmt.Errorf("%s names no server or no node: join the hub again", filepath.Join(dir, identityFile))
	}
	if id.caPEM, err = os.ReadFile(filepath.Join(dir, caFile)); err != nil {
		return nil, err
	}
	if id.ca, err = parseCert(id.caPEM); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, caFile), err)
	}
	if err := finishRotation(dir); err != nil {
		return nil, err
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, certFile), filepath.Join(dir, keyFile))
	if err != nil {
		return nil, fmt.Errorf("the node's key pair in %s: %w", dir, err)
	}
	id.creds = &credentials{cert: &pair}
	return id, nil
}

// Certificate is the node's current certificate.
func (id *Identity) Certificate() *x509.Certificate { return id.creds.current().Leaf }

// finishRotation completes a replacement of the key pair that a crash cut
// short. Each .next file is complete once it exists; the key is renamed
// first, so a certificate.next alone means its key is in place already.
func finishRotation(dir string) error {
	key, cert := filepath.Join(dir, keyFile), filepath.Join(dir, certFile)
	if _, err := os.Stat(cert + nextSuffix); errors.Is(err, fs.ErrNotExist) {
		// A new key without its certificate is of no use.
		if err := os.Remove(key + nextSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.Rename(key+nextSuffix, key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(cert+nextSuffix, cert); err != nil {
		return err
	}
	return syncDir(dir)
}

// savePair writes a new key pair beside the current one, then renames it
// over: the current pair stays whole until the new one is.
func savePair(dir string, keyPEM, certPEM []byte) error {
	key, cert := filepath.Join(dir, keyFile), filepath.Join(dir, certFile)
	if err := writeFile(key+nextSuffix, keyPEM, 0o600); err != nil {
		return err
	}
	if err := writeFile(cert+nextSuffix, certPEM, 0o644); err != nil {
		_ = os.Remove(key + nextSuffix)
		return err
	}
	return finishRotation(dir)
}

// writeFile writes path whole or not at all: a temporary file, synced,
// renamed over it. A device loses power when it does.
func writeFile(path string, data []byte, perm os.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes the renames in dir survive a power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// parseCert parses the first certificate of PEM b.
func parseCert(b []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return nil, errors.New("no PEM CERTIFICATE")
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}
