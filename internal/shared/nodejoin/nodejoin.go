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

// Package nodejoin adds edge nodes and issues the join tokens their
// devices join the edge hub with: what kubectl edge node add and token do,
// and the facade's POST /api/v1/node and /api/v1/node/{id}/token. Each
// caller words its own input errors around the checks here.
package nodejoin

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
)

// DefaultHubNamespace is where the manager runs the hub unless told
// otherwise.
const DefaultHubNamespace = "edgeplane-system"

// MaxTTL bounds a join token's life: a join token is a password for a
// node, and one left lying about for longer than a week is more risk than
// help.
const MaxTTL = 7 * 24 * time.Hour

// nodeKind is how an edge node is named in messages.
const nodeKind = "edgenode/"

// Errors the callers tell apart with errors.Is.
var (
	// ErrHubNotPublished: the hub's info ConfigMap is not there, so the
	// hub is not running (or never ran) in the hub namespace.
	ErrHubNotPublished = errors.New("the edge hub has not published how devices reach it")
	// ErrNoServer: the hub's info names no URL and none was given.
	ErrNoServer = errors.New("the edge hub's info names no server")
	// ErrNodeNotFound: NewToken was asked for a node that does not exist.
	ErrNodeNotFound = errors.New("no such edge node")
)

// hubError is an error of the hub's info, with its own sentence.
type hubError struct {
	msg  string
	kind error
}

func (e *hubError) Error() string        { return e.msg }
func (e *hubError) Is(target error) bool { return target == e.kind }

// CheckName says why name cannot name an edge node that joins with a
// token, or nil.
func CheckName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%q cannot name an edge node: %s", name, strings.Join(errs, "; "))
	}
	// Its join tokens carry the name in a label, whose values are shorter
	// than names may be.
	if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
		return fmt.Errorf("%q cannot name an edge node that joins with a token: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// CheckTTL says why ttl is no join token's life, or nil.
func CheckTTL(ttl time.Duration) error {
	if ttl <= 0 || ttl > MaxTTL {
		return fmt.Errorf("a join token lasts more than 0 and at most %v", MaxTTL)
	}
	return nil
}

// CheckHub says why hub is not a hub URL devices can be given, or nil.
func CheckHub(hub string) error {
	if u, err := url.Parse(hub); err != nil || u.Scheme != "https" || u.Host == "" {
		return errors.New("give the hub's URL as devices reach it, https://HOST:PORT")
	}
	return nil
}

// CheckLabel says why k=v cannot label an edge node, or nil.
func CheckLabel(k, v string) error {
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return fmt.Errorf("%q is not a label key: %s", k, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return fmt.Errorf("%q is not a value of label %s: %s", v, k, strings.Join(errs, "; "))
	}
	return nil
}

// Joiner adds nodes and issues join tokens.
type Joiner struct {
	// Client writes the EdgeNode and the token's Secret.
	Client client.Client
	// Reader reads the hub's info and EdgeNodes; Client when nil. A
	// reader past any cache, so that a node just added is found and no
	// ConfigMap informer is started.
	Reader client.Reader
	// FieldManager owns what is written.
	FieldManager string
	// HubNamespace holds the hub's info and the join tokens;
	// DefaultHubNamespace when empty.
	HubNamespace string
	// Hub, when set, is the hub's URL as devices reach it, in place of
	// the one the hub published.
	Hub string
	// CleanupTimeout bounds the delete that takes a node back when its
	// token could not be made; 10s when zero.
	CleanupTimeout time.Duration
	// Now is the time; time.Now when nil.
	Now func() time.Time
}

// Node is what an edge node is added with. Address, Type and Arch are
// optional: without an address the node's agent reports its own.
type Node struct {
	Name, Address, Type, Arch string
	Labels                    map[string]string
}

// Join is a join token issued for a node: the command that joins its
// device, and when the token expires.
type Join struct {
	Node    *edgev1alpha1.EdgeNode
	Token   hubapi.Token
	Server  string
	CAHash  string
	Expires time.Time
}

// Command is the edge-agent join command to run on the device.
func (j *Join) Command() string {
	return fmt.Sprintf("edge-agent join --hub %s --token %s --ca-cert-hash %s", j.Server, j.Token, j.CAHash)
}

func (j *Joiner) reader() client.Reader {
	if j.Reader != nil {
		return j.Reader
	}
	return j.Client
}

func (j *Joiner) namespace() string {
	if j.HubNamespace != "" {
		return j.HubNamespace
	}
	return DefaultHubNamespace
}

func (j *Joiner) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

// HubInfo reads how devices reach the hub from the ConfigMap it
// publishes: its URL (Hub wins) and the pin of its CA.
func (j *Joiner) HubInfo(ctx context.Context) (server, caHash string, err error) {
	ns := j.namespace()
	cm := &corev1.ConfigMap{}
	if err := j.reader().Get(ctx, client.ObjectKey{Namespace: ns, Name: hubapi.InfoConfigMap}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", &hubError{kind: ErrHubNotPublished, msg: fmt.Sprintf("the edge hub has not published ConfigMap %s in namespace %s: is the hub running? (manager --hub-bind-address)",
				hubapi.InfoConfigMap, ns)}
		}
		return "", "", err
	}
	block, _ := pem.Decode([]byte(cm.Data[hubapi.InfoCACert]))
	if block == nil || block.Type != "CERTIFICATE" {
		return "", "", fmt.Errorf("ConfigMap %s in namespace %s holds no PEM certificate in %s: restart the hub to publish it again",
			hubapi.InfoConfigMap, ns, hubapi.InfoCACert)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", "", fmt.Errorf("the CA in ConfigMap %s in namespace %s: %w", hubapi.InfoConfigMap, ns, err)
	}
	server = j.Hub
	if server == "" {
		server = cm.Data[hubapi.InfoServer]
	}
	if server == "" {
		return "", "", &hubError{kind: ErrNoServer, msg: fmt.Sprintf("ConfigMap %s in namespace %s names no server", hubapi.InfoConfigMap, ns)}
	}
	return server, hubapi.CAHash(ca), nil
}

// Add creates the EdgeNode and a join token for it good for ttl. The
// hub's info is read first, so a hub that is not there leaves no node
// behind; a token that cannot be made takes the node back, so that the
// same request can be made again. A name taken is the API server's
// AlreadyExists, a spec it refuses its Invalid, both unwrapped. The input
// is the caller's to check (CheckName, CheckTTL, CheckLabel).
func (j *Joiner) Add(ctx context.Context, n Node, ttl time.Duration) (*Join, error) {
	server, caHash, err := j.HubInfo(ctx)
	if err != nil {
		return nil, err
	}
	node := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels},
		Spec: edgev1alpha1.EdgeNodeSpec{Type: n.Type, Arch: n.Arch, Address: n.Address}}
	if err := j.Client.Create(ctx, node, client.FieldOwner(j.FieldManager)); err != nil {
		return nil, err
	}
	join, err := j.issue(ctx, node, server, caHash, ttl)
	if err != nil {
		// Without a token the node cannot join: take it back. The
		// deadline may be what failed, so the delete gets one of its own.
		timeout := j.CleanupTimeout
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		if derr := j.Client.Delete(dctx, node, client.Preconditions{UID: &node.UID}); derr != nil && !apierrors.IsNotFound(derr) {
			return nil, fmt.Errorf("%w; %s%s was created without a token and could not be deleted (%v): delete it with kubectl delete edgenode %s before trying again",
				err, nodeKind, n.Name, derr, n.Name)
		}
		return nil, err
	}
	return join, nil
}

// NewToken issues a new join token good for ttl for the EdgeNode name
// that exists; with uid set, only if the node has that uid. A node that
// does not exist is ErrNodeNotFound.
func (j *Joiner) NewToken(ctx context.Context, name string, uid types.UID, ttl time.Duration) (*Join, error) {
	node := &edgev1alpha1.EdgeNode{}
	if err := j.reader().Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s%s: %w", nodeKind, name, ErrNodeNotFound)
		}
		return nil, err
	}
	if uid != "" && node.UID != uid {
		return nil, fmt.Errorf("%s%s: %w", nodeKind, name, ErrNodeNotFound)
	}
	server, caHash, err := j.HubInfo(ctx)
	if err != nil {
		return nil, err
	}
	return j.issue(ctx, node, server, caHash, ttl)
}

// issue creates a join token's Secret for node.
func (j *Joiner) issue(ctx context.Context, node *edgev1alpha1.EdgeNode, server, caHash string, ttl time.Duration) (*Join, error) {
	t, err := hubapi.NewToken()
	if err != nil {
		return nil, err
	}
	ns := j.namespace()
	expires := j.now().Add(ttl)
	s := hubapi.JoinSecret(t, ns, node.Name, expires)
	// The node owns its tokens: deleting it deletes them, so that none
	// joins a node added later under the same name.
	s.OwnerReferences = []metav1.OwnerReference{{APIVersion: edgev1alpha1.GroupVersion.String(), Kind: "EdgeNode", Name: node.Name, UID: node.UID}}
	if err := j.Client.Create(ctx, s, client.FieldOwner(j.FieldManager)); err != nil {
		return nil, fmt.Errorf("creating the join token of %s%s in namespace %s: %w", nodeKind, node.Name, ns, err)
	}
	return &Join{Node: node, Token: t, Server: server, CAHash: caHash, Expires: expires.UTC().Truncate(time.Second)}, nil
}
