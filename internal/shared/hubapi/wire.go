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

package hubapi

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"strings"
)

// Paths of the hub's own API beside the Kubernetes-API subset it serves.
const (
	// JoinPath takes a JoinRequest over TLS without a client certificate.
	JoinPath = "/hub/v1/join"
	// RenewPath takes a RenewRequest from a node's current certificate.
	RenewPath = "/hub/v1/renew"
)

// JoinRequest is a device's one-time request to join: the token it was
// given and a certificate request for a key it made and keeps.
type JoinRequest struct {
	Token string `json:"token"`
	// Node, when set, is the node the device means to be: a token for
	// another node is refused.
	Node string `json:"node,omitempty"`
	// CSR is a PEM CERTIFICATE REQUEST, signed by the device's key.
	CSR string `json:"csr"`
}

// JoinResponse is what a device keeps after it joined.
type JoinResponse struct {
	Node string `json:"node"`
	// Certificate is the node's PEM client certificate, valid until
	// NotAfter; CACert is the hub's PEM CA, which the device trusts from
	// now on for the hub's serving certificate.
	Certificate string `json:"certificate"`
	CACert      string `json:"caCert"`
	// LeaseNamespace is where the node's Lease is, as the agent names it.
	LeaseNamespace string `json:"leaseNamespace"`
}

// RenewRequest asks for a new certificate of a new key before the current
// one expires.
type RenewRequest struct {
	CSR string `json:"csr"`
}

// RenewResponse carries the new certificate.
type RenewResponse struct {
	Certificate string `json:"certificate"`
}

// NodeCertOrganization is the organization of every node certificate the
// hub issues; the common name is the node's name.
const NodeCertOrganization = "edge.edgeplane.io:nodes"

// CAHash is the pin of a CA as kubeadm writes it: sha256: and the hex
// SHA-256 of the certificate's SubjectPublicKeyInfo.
func CAHash(ca *x509.Certificate) string {
	sum := sha256.Sum256(ca.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CheckCAHash says whether pin is well formed.
func CheckCAHash(pin string) error {
	h, ok := strings.CutPrefix(pin, "sha256:")
	if b, err := hex.DecodeString(h); !ok || err != nil || len(b) != sha256.Size {
		return fmt.Errorf("--ca-cert-hash %q: want sha256: and 64 hex digits, as kubectl edge node add prints it", pin)
	}
	return nil
}

// The hub publishes how devices reach it in a ConfigMap of its namespace,
// as kubeadm publishes cluster-info: kubectl edge node add reads it to
// print the join command.
const (
	InfoConfigMap = "edgeplane-hub-info"
	// InfoServer is the hub's URL as devices reach it.
	InfoServer = "server"
	// InfoCACert is the hub's PEM CA.
	InfoCACert = "ca.crt"
	// CASecret holds the hub's CA (tls.crt, tls.key); the hub makes one
	// when it is missing, or uses the one given.
	CASecret = "edgeplane-hub-ca"
)

// AnnotationRevokedBefore on an EdgeNode refuses every certificate of the
// node issued before its time (RFC 3339): kubectl edge node revoke sets
// it; a new join token issues a certificate after it.
const AnnotationRevokedBefore = "edge.edgeplane.io/credentials-revoked-before"

// Liveness through the hub. Each hub replica renews a Lease of its own in
// the node Lease namespace, labelled LabelHubReplica. A node's own Lease
// is written only on the node's transitions: its holder is HolderPrefix
// and the replica's Lease name while the node beats at that replica, and
// empty once it stopped beating there for the grace period. The node is
// online while its holder's Lease is renewed.
const (
	LabelHubReplica = "edge.edgeplane.io/hub-replica"
	HolderPrefix    = "hub/"
)
