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

package apiserver

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/nodejoin"
)

// The facade's node operations (not in the contract): add an edge node
// with a join token for its device, and a new join token for a node, as
// kubectl edge node add and token do. The join tokens are Secrets in the
// hub's namespace, read by the hub; the facade writes them and reads the
// hub's info ConfigMap there. Deleting a node whose token could not be
// made takes delete on edgenodes.
// +kubebuilder:rbac:groups=edge.edgeplane.io,resources=edgenodes,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create;delete,namespace=edgeplane-system
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get,namespace=edgeplane-system

// defaultTokenTTL is a join token's life when the request gives none.
const defaultTokenTTL = time.Hour

// The patterns of the EdgeNode's spec, checked here (the address by
// edgev1alpha1.ValidAddress) so that bad input is a 400 naming its field
// before anything is read or written.
var (
	typePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	archPattern = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)
)

// newNodeBody is the body of POST /api/v1/node.
type newNodeBody struct {
	Name       *string           `json:"name"`
	Address    *string           `json:"address"`
	Type       string            `json:"type"`
	Arch       string            `json:"arch"`
	Labels     map[string]string `json:"labels"`
	TTLSeconds *int64            `json:"ttlSeconds"`
}

// tokenBody is the body of POST /api/v1/node/{id}/token.
type tokenBody struct {
	TTLSeconds *int64 `json:"ttlSeconds"`
}

// joinItem is the answer of both: the node, the command that joins its
// device and when its token expires (RFC 3339, UTC).
type joinItem struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Command string `json:"command"`
	Expires string `json:"expires"`
}

func joinItemOf(j *nodejoin.Join) joinItem {
	return joinItem{ID: string(j.Node.UID), Name: j.Node.Name, Command: j.Command(), Expires: j.Expires.UTC().Format(time.RFC3339)}
}

// ttlOf reads ttlSeconds into fields' terms: absent is an hour.
func ttlOf(secs *int64, fields map[string]string) time.Duration {
	if secs == nil {
		return defaultTokenTTL
	}
	most := int64(nodejoin.MaxTTL / time.Second)
	if *secs < 1 || *secs > most {
		fields["ttlSeconds"] = fmt.Sprintf("must be between 1 and %d (a week): how long the join token is good for", most)
		return 0
	}
	return time.Duration(*secs) * time.Second
}

func (s *Server) joiner() *nodejoin.Joiner {
	return &nodejoin.Joiner{Client: s.writer, Reader: s.live, FieldManager: FieldManager, HubNamespace: s.opts.HubNamespace, CleanupTimeout: writeTimeout}
}

// joinError turns what nodejoin returns into the envelope's terms.
func (s *Server) joinError(err error, nothing string) error {
	switch {
	case errors.Is(err, nodejoin.ErrHubNotPublished):
		return errorf(http.StatusServiceUnavailable, "The edge hub is not running: it has not published ConfigMap edgeplane-hub-info in namespace %s "+
			"(start the manager with --hub-bind-address); %s", s.opts.HubNamespace, nothing)
	case errors.Is(err, nodejoin.ErrNoServer):
		return errorf(http.StatusServiceUnavailable, "The edge hub has published no URL that devices reach it by "+
			"(set the manager's hub advertise URL); %s", nothing)
	}
	return fromKube(err)
}

// createNode serves POST /api/v1/node: an EdgeNode and a join token for
// its device, as kubectl edge node add makes them.
func (s *Server) createNode(r *http.Request) (any, error) {
	var body newNodeBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	fields := map[string]string{}
	name := ""
	if body.Name == nil || *body.Name == "" {
		fields["name"] = "is required: the name of the edge node"
	} else if err := nodejoin.CheckName(*body.Name); err != nil {
		name = *body.Name
		fields["name"] = err.Error()
	} else {
		name = *body.Name
	}
	// No address, or an empty one: the node's agent reports its own.
	address := ""
	if body.Address != nil && *body.Address != "" {
		if !edgev1alpha1.ValidAddress(*body.Address) {
			fields["address"] = fmt.Sprintf("%q %s", *body.Address, edgev1alpha1.AddressMessage)
		} else {
			address = *body.Address
		}
	}
	if body.Type != "" && !typePattern.MatchString(body.Type) {
		fields["type"] = fmt.Sprintf("%q is no operating system kind: lowercase, such as linux or sylixos", body.Type)
	}
	if body.Arch != "" && !archPattern.MatchString(body.Arch) {
		fields["arch"] = fmt.Sprintf("%q is no CPU architecture: lowercase, such as amd64 or arm64", body.Arch)
	}
	var labelErrs []string
	for _, k := range slices.Sorted(maps.Keys(body.Labels)) {
		if err := nodejoin.CheckLabel(k, body.Labels[k]); err != nil {
			labelErrs = append(labelErrs, err.Error())
		}
	}
	if len(labelErrs) > 0 {
		fields["labels"] = strings.Join(labelErrs, "; ")
	}
	ttl := ttlOf(body.TTLSeconds, fields)
	if len(fields) > 0 {
		return nil, badFields(fields)
	}
	labels := body.Labels
	if len(labels) == 0 {
		labels = nil
	}
	j, err := s.joiner().Add(r.Context(), nodejoin.Node{Name: name, Address: address, Type: body.Type, Arch: body.Arch, Labels: labels}, ttl)
	if err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, &apiError{status: http.StatusConflict, msg: fmt.Sprintf("An edge node named %s exists; give another name, or issue a new join token for it.", name),
				fields: map[string]string{"name": "is taken"}}
		}
		return nil, s.joinError(err, "no node was added.")
	}
	s.log.Info("Added an edge node", "node", name, "expires", j.Expires)
	return joinItemOf(j), nil
}

// newNodeToken serves POST /api/v1/node/{id}/token: a new join token for
// a node that exists, as kubectl edge node token issues one.
func (s *Server) newNodeToken(r *http.Request) (any, error) {
	var body tokenBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	fields := map[string]string{}
	ttl := ttlOf(body.TTLSeconds, fields)
	if len(fields) > 0 {
		return nil, badFields(fields)
	}
	id := r.PathValue("id")
	var name string
	for _, n := range s.nodeIndex.get(id) {
		name = n.Name
	}
	if name == "" {
		return nil, notFound("No node has the id %q.", id)
	}
	j, err := s.joiner().NewToken(r.Context(), name, types.UID(id), ttl)
	if err != nil {
		if errors.Is(err, nodejoin.ErrNodeNotFound) {
			return nil, notFound("No node has the id %q.", id)
		}
		return nil, s.joinError(err, "no token was issued.")
	}
	s.log.Info("Issued a join token", "node", name, "expires", j.Expires)
	return joinItemOf(j), nil
}
