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
	"net/url"
	"testing"
)

func TestAuthorize(t *testing.T) {
	s := scope{leaseNamespace: "edgeplane-node-lease"}
	for _, tc := range []struct {
		name, method, url string
		allowed           bool
	}{
		{"own lease read", "GET", "/apis/coordination.k8s.io/v1/namespaces/edgeplane-node-lease/leases/n1", true},
		{"own lease renewed", "PUT", "/apis/coordination.k8s.io/v1/namespaces/edgeplane-node-lease/leases/n1", true},
		{"own lease created", "POST", "/apis/coordination.k8s.io/v1/namespaces/edgeplane-node-lease/leases", true},
		{"another node's lease", "PUT", "/apis/coordination.k8s.io/v1/namespaces/edgeplane-node-lease/leases/n2", false},
		{"a lease elsewhere", "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/n1", false},
		{"lease deleted", "DELETE", "/apis/coordination.k8s.io/v1/namespaces/edgeplane-node-lease/leases/n1", false},
		{"own assignment", "GET", "/apis/edge.edgeplane.io/v1alpha1/nodeassignments/n1", true},
		{"own assignment listed by name", "GET", "/apis/edge.edgeplane.io/v1alpha1/nodeassignments?fieldSelector=metadata.name%3Dn1", true},
		{"own assignment watched by name", "GET", "/apis/edge.edgeplane.io/v1alpha1/nodeassignments?fieldSelector=metadata.name%3Dn1&watch=true", true},
		{"every assignment listed", "GET", "/apis/edge.edgeplane.io/v1alpha1/nodeassignments", false},
		{"another node's assignment watched", "GET", "/apis/edge.edgeplane.io/v1alpha1/nodeassignments?fieldSelector=metadata.name%3Dn2&watch=true", false},
		{"own assignment written", "PUT", "/apis/edge.edgeplane.io/v1alpha1/nodeassignments/n1", false},
		{"own node read", "GET", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/n1", true},
		{"own node registered", "POST", "/apis/edge.edgeplane.io/v1alpha1/edgenodes", true},
		{"own node status reported", "PATCH", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/n1/status", true},
		{"own node spec patched", "PATCH", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/n1", false},
		{"another node's status", "PATCH", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/n2/status", false},
		{"every node listed", "GET", "/apis/edge.edgeplane.io/v1alpha1/edgenodes", false},
		{"own credentials", "GET", "/api/v1/namespaces/edgeplane-node-lease/secrets/n1", true},
		{"another node's credentials", "GET", "/api/v1/namespaces/edgeplane-node-lease/secrets/n2", false},
		{"a secret elsewhere", "GET", "/api/v1/namespaces/default/secrets/n1", false},
		{"secrets listed", "GET", "/api/v1/namespaces/edgeplane-node-lease/secrets", false},
		{"services", "GET", "/apis/edge.edgeplane.io/v1alpha1/namespaces/default/edgeservices/n1", false},
		{"pods", "GET", "/api/v1/pods", false},
		{"discovery", "GET", "/apis", false},
		{"leases deleted as a collection", "DELETE", "/apis/coordination.k8s.io/v1/namespaces/edgeplane-node-lease/leases", false},
		{"below a subresource", "PATCH", "/apis/edge.edgeplane.io/v1alpha1/edgenodes/n1/status/extra", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			r, err := parseRequest(tc.method, u)
			if err == nil {
				err = s.authorize("n1", r)
			}
			if got := err == nil; got != tc.allowed {
				t.Fatalf("allowed = %v, want %v (%v)", got, tc.allowed, err)
			}
		})
	}
}
