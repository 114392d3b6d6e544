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

package kubectledge

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
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
	"github.com/edgeplane/edgeplane/internal/hubapi"
)

// nodeKind is how the plugin names an edge node in what it prints.
const nodeKind = "edgenode/"

// defaultHubNamespace is where the manager runs the hub unless told
// otherwise.
const defaultHubNamespace = "edgeplane-system"

// maxTokenTTL bounds --ttl: a join token is a password for a node, and
// one left lying about for longer than a week is more risk than help.
const maxTokenTTL = 7 * 24 * time.Hour

// nodeOptions say what node add makes and where the hub is.
type nodeOptions struct {
	name    string
	labels  string // k=v,k2=v2
	typ     string
	arch    string
	address string
	// ttl is how long a new join token is good for.
	ttl time.Duration
	// hub overrides the URL the hub published, for devices that reach it
	// by another name.
	hub          string
	hubNamespace string
}

// nodes runs the node commands: the join command goes to out, what a
// person should know of it to errOut, so that out can be piped to a device.
type nodes struct {
	*rollout
	errOut io.Writer
}

// check refuses bad input before anything is read or written.
func (o *nodeOptions) check() error {
	if errs := validation.IsDNS1123Subdomain(o.name); len(errs) > 0 {
		return fmt.Errorf("%q cannot name an edge node: %s", o.name, strings.Join(errs, "; "))
	}
	// Its join tokens carry the name in a label, whose values are shorter
	// than names may be.
	if errs := validation.IsValidLabelValue(o.name); len(errs) > 0 {
		return fmt.Errorf("%q cannot name an edge node that joins with a token: %s", o.name, strings.Join(errs, "; "))
	}
	if o.ttl <= 0 || o.ttl > maxTokenTTL {
		return fmt.Errorf("--ttl %v: a join token lasts more than 0 and at most %v", o.ttl, maxTokenTTL)
	}
	if o.hub != "" {
		if u, err := url.Parse(o.hub); err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("--hub %q: give the hub's URL as devices reach it, https://HOST:PORT", o.hub)
		}
	}
	if err := checkHubNamespace(o.hubNamespace); err != nil {
		return err
	}
	_, err := parseLabels(o.labels)
	return err
}

func checkHubNamespace(ns string) error {
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("--hub-namespace %q is not a namespace: %s", ns, strings.Join(errs, "; "))
	}
	return nil
}

// parseLabels reads k=v,k2=v2 as kubectl label reads its arguments.
func parseLabels(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--labels %q: want KEY=VALUE pairs joined by commas", kv)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("--labels: %q is not a label key: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("--labels: %q is not a value of label %s: %s", v, k, strings.Join(errs, "; "))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("--labels gives %s twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// hubInfo reads how devices reach the hub from the ConfigMap it publishes:
// its URL (--hub wins) and the pin of its CA.
func (n *nodes) hubInfo(ctx context.Context, o nodeOptions) (server, caHash string, err error) {
	cm := &corev1.ConfigMap{}
	if err := n.c.Get(ctx, client.ObjectKey{Namespace: o.hubNamespace, Name: hubapi.InfoConfigMap}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", fmt.Errorf("the edge hub has not published ConfigMap %s in namespace %s: is the hub running? (manager --hub-bind-address)",
				hubapi.InfoConfigMap, o.hubNamespace)
		}
		return "", "", err
	}
	block, _ := pem.Decode([]byte(cm.Data[hubapi.InfoCACert]))
	if block == nil || block.Type != "CERTIFICATE" {
		return "", "", fmt.Errorf("ConfigMap %s in namespace %s holds no PEM certificate in %s: restart the hub to publish it again",
			hubapi.InfoConfigMap, o.hubNamespace, hubapi.InfoCACert)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", "", fmt.Errorf("the CA in ConfigMap %s in namespace %s: %w", hubapi.InfoConfigMap, o.hubNamespace, err)
	}
	server = o.hub
	if server == "" {
		server = cm.Data[hubapi.InfoServer]
	}
	if server == "" {
		return "", "", fmt.Errorf("ConfigMap %s in namespace %s names no server: give the hub's URL as devices reach it with --hub",
			hubapi.InfoConfigMap, o.hubNamespace)
	}
	return server, hubapi.CAHash(ca), nil
}

// add creates the EdgeNode and a join token for it, and prints the
// command that joins the device. The hub's info is read first, so a hub
// that is not there leaves no node behind.
func (n *nodes) add(ctx context.Context, o nodeOptions) error {
	labels, err := parseLabels(o.labels)
	if err != nil {
		return err
	}
	server, caHash, err := n.hubInfo(ctx, o)
	if err != nil {
		return err
	}
	node := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: o.name, Labels: labels},
		Spec: edgev1alpha1.EdgeNodeSpec{Type: o.typ, Arch: o.arch, Address: o.address}}
	if err := n.c.Create(ctx, node, client.FieldOwner(FieldManager)); err != nil {
		switch {
		case apierrors.IsAlreadyExists(err):
			return fmt.Errorf("%s%s already exists; for a new join token run kubectl edge node token %s", nodeKind, o.name, o.name)
		case apierrors.IsInvalid(err):
			return fmt.Errorf("%w (--address, --type and --arch set its spec)", err)
		}
		return err
	}
	if err := n.issue(ctx, o, node, server, caHash); err != nil {
		// Without a token the node cannot join: take it back, so that the
		// same command can be run again. The deadline may be what failed,
		// so the delete gets one of its own.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), n.timeout)
		defer cancel()
		if derr := n.c.Delete(dctx, node, client.Preconditions{UID: &node.UID}); derr != nil && !apierrors.IsNotFound(derr) {
			return fmt.Errorf("%w; %s%s was created without a token and could not be deleted (%v): delete it with kubectl delete edgenode %s before trying again",
				err, nodeKind, o.name, derr, o.name)
		}
		return err
	}
	return nil
}

// token prints a new join command for an EdgeNode that exists.
func (n *nodes) token(ctx context.Context, o nodeOptions) error {
	node, err := n.node(ctx, o.name)
	if err != nil {
		return err
	}
	server, caHash, err := n.hubInfo(ctx, o)
	if err != nil {
		return err
	}
	return n.issue(ctx, o, node, server, caHash)
}

// node reads an EdgeNode, saying how to add it when there is none.
func (n *nodes) node(ctx context.Context, name string) (*edgev1alpha1.EdgeNode, error) {
	node := &edgev1alpha1.EdgeNode{}
	if err := n.c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s%s does not exist; add it with kubectl edge node add %s", nodeKind, name, name)
		}
		return nil, err
	}
	return node, nil
}

// issue creates a join token's Secret for node and prints the join
// command.
func (n *nodes) issue(ctx context.Context, o nodeOptions, node *edgev1alpha1.EdgeNode, server, caHash string) error {
	t, err := hubapi.NewToken()
	if err != nil {
		return err
	}
	expires := time.Now().Add(o.ttl)
	s := hubapi.JoinSecret(t, o.hubNamespace, node.Name, expires)
	// The node owns its tokens: deleting it deletes them, so that none
	// joins a node added later under the same name.
	s.OwnerReferences = []metav1.OwnerReference{{APIVersion: edgev1alpha1.GroupVersion.String(), Kind: "EdgeNode", Name: node.Name, UID: node.UID}}
	if err := n.c.Create(ctx, s, client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("creating the join token of %s%s in namespace %s: %w", nodeKind, node.Name, o.hubNamespace, err)
	}
	fmt.Fprintf(n.out, "edge-agent join --hub %s --token %s --ca-cert-hash %s\n", server, t, caHash)
	fmt.Fprintf(n.errOut, "the token joins node %s once, until %s\n", node.Name, expires.UTC().Format(time.RFC3339))
	return nil
}

// revoke refuses the node's certificates issued until now and deletes
// its unused join tokens. The tokens go first: one used meanwhile gets a
// certificate from before the revocation, which is refused too.
func (n *nodes) revoke(ctx context.Context, name, hubNamespace string) error {
	node, err := n.node(ctx, name)
	if err != nil {
		return err
	}
	list := &corev1.SecretList{}
	if err := n.c.List(ctx, list, client.InNamespace(hubNamespace), client.MatchingLabels{hubapi.LabelJoinNode: name}); err != nil {
		return fmt.Errorf("listing the join tokens of %s%s in namespace %s: %w", nodeKind, name, hubNamespace, err)
	}
	for i := range list.Items {
		s := &list.Items[i]
		if s.Type != hubapi.SecretTypeJoinToken || hubapi.Used(s) {
			continue
		}
		// The resourceVersion keeps a token the hub marked used meanwhile.
		err := n.c.Delete(ctx, s, client.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion})
		switch {
		case apierrors.IsConflict(err):
			return fmt.Errorf("join token Secret %s changed while revoking %s%s; run the command again", s.Name, nodeKind, name)
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("deleting join token Secret %s of %s%s: %w", s.Name, nodeKind, name, err)
		}
	}
	at := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{hubapi.AnnotationRevokedBefore: at}}})
	if err != nil {
		return err
	}
	if err := n.c.Patch(ctx, node, client.RawPatch(types.MergePatchType, raw), client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsNotFound(err) {
			return errors.New(nodeKind + name + " was deleted while revoking it")
		}
		return err
	}
	fmt.Fprintf(n.out, "%s%s revoked: its certificates are refused from %s; a new token joins it again (kubectl edge node token %s)\n", nodeKind, name, at, name)
	return nil
}
