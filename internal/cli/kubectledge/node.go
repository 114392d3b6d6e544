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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/shared/nodejoin"
)

// nodeKind is how the plugin names an edge node in what it prints.
const nodeKind = "edgenode/"

// defaultHubNamespace is where the manager runs the hub unless told
// otherwise.
const defaultHubNamespace = nodejoin.DefaultHubNamespace

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
	if err := nodejoin.CheckName(o.name); err != nil {
		return err
	}
	if err := nodejoin.CheckTTL(o.ttl); err != nil {
		return fmt.Errorf("--ttl %v: %w", o.ttl, err)
	}
	if o.hub != "" {
		if err := nodejoin.CheckHub(o.hub); err != nil {
			return fmt.Errorf("--hub %q: %w", o.hub, err)
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
		if err := nodejoin.CheckLabel(k, v); err != nil {
			return nil, fmt.Errorf("--labels: %w", err)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("--labels gives %s twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// joiner does what the node commands ask of the hub's namespace.
func (n *nodes) joiner(o nodeOptions) *nodejoin.Joiner {
	return &nodejoin.Joiner{Client: n.c, FieldManager: FieldManager, HubNamespace: o.hubNamespace, Hub: o.hub, CleanupTimeout: n.timeout}
}

// hubError words an error of the hub's info for the plugin's flags.
func hubError(err error) error {
	if errors.Is(err, nodejoin.ErrNoServer) {
		return fmt.Errorf("%w: give the hub's URL as devices reach it with --hub", err)
	}
	return err
}

// add creates the EdgeNode and a join token for it, and prints the
// command that joins the device. The hub's info is read first, so a hub
// that is not there leaves no node behind.
func (n *nodes) add(ctx context.Context, o nodeOptions) error {
	labels, err := parseLabels(o.labels)
	if err != nil {
		return err
	}
	j, err := n.joiner(o).Add(ctx, nodejoin.Node{Name: o.name, Labels: labels, Type: o.typ, Arch: o.arch, Address: o.address}, o.ttl)
	switch {
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("%s%s already exists; for a new join token run kubectl edge node token %s", nodeKind, o.name, o.name)
	case apierrors.IsInvalid(err):
		return fmt.Errorf("%w (--address, --type and --arch set its spec)", err)
	case err != nil:
		return hubError(err)
	}
	n.print(j)
	return nil
}

// token prints a new join command for an EdgeNode that exists.
func (n *nodes) token(ctx context.Context, o nodeOptions) error {
	j, err := n.joiner(o).NewToken(ctx, o.name, "", o.ttl)
	if errors.Is(err, nodejoin.ErrNodeNotFound) {
		return notAdded(o.name)
	}
	if err != nil {
		return hubError(err)
	}
	n.print(j)
	return nil
}

// print writes the join command to out, alone, and when it expires to
// errOut.
func (n *nodes) print(j *nodejoin.Join) {
	fmt.Fprintln(n.out, j.Command())
	fmt.Fprintf(n.errOut, "the token joins node %s once, until %s\n", j.Node.Name, j.Expires.UTC().Format(time.RFC3339))
}

func notAdded(name string) error {
	return fmt.Errorf("%s%s does not exist; add it with kubectl edge node add %s", nodeKind, name, name)
}

// node reads an EdgeNode, saying how to add it when there is none.
func (n *nodes) node(ctx context.Context, name string) (*edgev1alpha1.EdgeNode, error) {
	node := &edgev1alpha1.EdgeNode{}
	if err := n.c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notAdded(name)
		}
		return nil, err
	}
	return node, nil
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
