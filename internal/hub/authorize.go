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
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/util/sets"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// request is what the node authorizer decides on: a request of the
// Kubernetes-API subset the hub serves, parsed from its path and query.
type request struct {
	verb        string // get, list, watch, create, update, patch
	group       string // "" for the core group
	resource    string
	subresource string
	namespace   string
	name        string
}

// Resources of the subset, as the agent reaches them.
const (
	resLeases      = "leases"
	resAssignments = "nodeassignments"
	resNodes       = "edgenodes"
	resSecrets     = "secrets"
)

// requestInfos parses Kubernetes API paths as kube-apiserver does.
var requestInfos = &apirequest.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// parseRequest reads a Kubernetes API path and query as kube-apiserver's
// RequestInfoFactory does (a list or watch of one name by fieldSelector
// names it); anything but a resource request, or a path deeper than a
// subresource, is not of the subset.
func parseRequest(method string, u *url.URL) (request, error) {
	info, err := requestInfos.NewRequestInfo(&http.Request{Method: method, URL: u})
	if err != nil {
		return request{}, err
	}
	if !info.IsResourceRequest || len(info.Parts) > 3 {
		return request{}, fmt.Errorf("the hub serves only an edge node's own objects; %s is not one of them", u.Path)
	}
	return request{verb: info.Verb, group: info.APIGroup, resource: info.Resource, subresource: info.Subresource,
		namespace: info.Namespace, name: info.Name}, nil
}

// scope is what the hub serves nodes from: the namespace of their Leases
// and credentials Secrets.
type scope struct{ leaseNamespace string }

// authorize says whether node may make r: only on its own objects, and on
// each only what its agent does. It is the hub's node authorizer, kept
// pure so that every decision is a row of a table test.
func (s scope) authorize(node string, r request) error {
	own := r.name == node
	var verbs []string
	switch {
	case r.group == "coordination.k8s.io" && r.resource == resLeases && r.subresource == "" && r.namespace == s.leaseNamespace:
		verbs = []string{"get", "create", "update"}
	case r.group == "edge.edgeplane.io" && r.resource == resAssignments && r.subresource == "" && r.namespace == "":
		verbs = []string{"get", "list", "watch"}
	case r.group == "edge.edgeplane.io" && r.resource == resNodes && r.namespace == "" && r.subresource == "":
		verbs = []string{"get", "create"}
	case r.group == "edge.edgeplane.io" && r.resource == resNodes && r.namespace == "" && r.subresource == "status":
		verbs = []string{"get", "patch"}
	case r.group == "" && r.resource == resSecrets && r.subresource == "" && r.namespace == s.leaseNamespace:
		verbs = []string{"get"}
	default:
		return fmt.Errorf("node %s may not %s %s: the hub serves a node only its Lease, NodeAssignment, EdgeNode and credentials", node, r.verb, r.describe())
	}
	if r.verb == "create" && r.name == "" {
		// A create names its object in the body; the handler checks it.
		own = true
	}
	if !own {
		return fmt.Errorf("node %s may not %s %s: a node reaches only its own objects", node, r.verb, r.describe())
	}
	for _, v := range verbs {
		if v == r.verb {
			return nil
		}
	}
	return fmt.Errorf("node %s may not %s %s", node, r.verb, r.describe())
}

func (r request) describe() string {
	s := r.resource
	if r.subresource != "" {
		s += "/" + r.subresource
	}
	if r.name != "" {
		s += " " + r.name
	}
	if r.namespace != "" {
		s += " in namespace " + r.namespace
	}
	return s
}
