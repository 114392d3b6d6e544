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

package apiserver_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/apiserver"
)

// The facade client roles shipped in config/rbac grant exactly what the
// facade's SubjectAccessReviews ask for on their routes, and what
// kube-apiserver authorizes for the same routes under the aggregated
// prefix, and nothing more: viewer every GET route, editor GET and POST,
// deleter GET and DELETE; every role the OpenAPI document both ways.
func TestFacadeRolesMatchRoutes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "config", "rbac", "facade_roles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]rbacv1.ClusterRole{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var r rbacv1.ClusterRole
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		roles[r.Name] = r
	}
	want := map[string][]string{
		"facade-viewer":  {http.MethodGet},
		"facade-editor":  {http.MethodGet, http.MethodPost, http.MethodPatch},
		"facade-deleter": {http.MethodGet, http.MethodDelete},
	}
	if len(roles) != len(want) {
		t.Fatalf("config/rbac/facade_roles.yaml has roles %v, want %v", keys(roles), keys(want))
	}
	routes := apiserver.Routes()
	for name, methods := range want {
		role, ok := roles[name]
		if !ok {
			t.Errorf("no role %s", name)
			continue
		}
		openapi := apiserver.AggregatedAccess(http.MethodGet, apiserver.OpenAPIPath)
		needed := map[string]bool{apiserver.AggregatedGroup + " " + openapi.Verb + " " + openapi.Resource: true}
		if !grantsAggregated(role.Rules, openapi) {
			t.Errorf("%s does not grant %v: the OpenAPI document through kube-apiserver", name, openapi)
		}
		// The console through kube-apiserver: its index (list) and files (get).
		for _, p := range apiserver.ConsoleAccess() {
			needed[apiserver.AggregatedGroup+" "+p.Verb+" "+p.Resource] = true
			if !grantsAggregated(role.Rules, p) {
				t.Errorf("%s does not grant %v: the console through kube-apiserver", name, p)
			}
		}
		for _, rt := range routes {
			in := slices.Contains(methods, rt.Method)
			if allowed := grantsAll(role.Rules, rt.Needs); in != allowed {
				t.Errorf("%s allows %s %s (%v): %v, want %v", name, rt.Method, rt.Pattern, rt.Needs, allowed, in)
			}
			if allowed := grantsAggregated(role.Rules, rt.Aggregated); in != allowed {
				t.Errorf("%s allows %s %s through kube-apiserver (%v): %v, want %v", name, rt.Method, rt.Pattern, rt.Aggregated, allowed, in)
			}
			if in {
				for _, p := range rt.Needs {
					needed[edgev1alpha1.GroupVersion.Group+" "+p.Verb+" "+p.Resource] = true
				}
				needed[apiserver.AggregatedGroup+" "+rt.Aggregated.Verb+" "+rt.Aggregated.Resource] = true
			}
		}
		for _, r := range role.Rules {
			for _, g := range r.APIGroups {
				if g == apiserver.AggregatedGroup && !slices.Equal(r.Resources, []string{"console"}) && !slices.Equal(r.ResourceNames, []string{apiserver.AggregatedName}) {
					t.Errorf("%s: a rule of %s must name only %q: %v", name, g, apiserver.AggregatedName, r)
				}
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						if !needed[g+" "+v+" "+res] {
							t.Errorf("%s grants %s %s in %s, which none of its routes asks for", name, v, res, g)
						}
					}
				}
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
