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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The facade's group and version behind kube-apiserver's aggregation
// layer: an APIService for them routes /apis/<group>/<version>/... here,
// and the contract is served under that prefix exactly as at the root.
const (
	AggregatedGroup   = "facade.edge.edgeplane.io"
	AggregatedVersion = "v1"
	AggregatedPrefix  = "/apis/" + AggregatedGroup + "/" + AggregatedVersion
)

// The contract seen as Kubernetes resources, as kube-apiserver reads a
// proxied path for its own authorization: /apis/<g>/<v>/api/v1/node is
// resource "api", name "v1", subresource "node". Nothing lists or watches
// "api" itself, so it has no verbs and no controller (garbage collector,
// namespace deletion, quota) ever asks for it.
const (
	aggregatedResource = "api"
	aggregatedKind     = "Envelope"
	// AggregatedName is the name kube-apiserver reads in every proxied
	// path: the "v1" of /api/v1.
	AggregatedName = "v1"
)

// AggregatedAccess is what kube-apiserver authorizes for a request of
// method on a route pattern (or the OpenAPI document) under
// AggregatedPrefix, before the facade sees it: verb on "api/<first segment
// after /api/v1/>" named AggregatedName in AggregatedGroup.
func AggregatedAccess(method, pattern string) Permission {
	sub, _, _ := strings.Cut(strings.TrimPrefix(pattern, "/api/v1/"), "/")
	verb := map[string]string{http.MethodGet: "get", http.MethodHead: "get", http.MethodPost: "create", http.MethodPatch: "patch", http.MethodDelete: "delete"}[method]
	return Permission{Verb: verb, Resource: aggregatedResource + "/" + sub}
}

// OpenAPIPath is where the OpenAPI document is served.
const OpenAPIPath = openAPIPath

// aggregatedSubresources are the subresources of "api" with the verbs
// kube-apiserver derives from each route's method, from the route table.
func aggregatedSubresources() []metav1.APIResource {
	verbs := map[string][]string{}
	var order []string
	add := func(p Permission) {
		if _, ok := verbs[p.Resource]; !ok {
			order = append(order, p.Resource)
		}
		if !slices.Contains(verbs[p.Resource], p.Verb) {
			verbs[p.Resource] = append(verbs[p.Resource], p.Verb)
		}
	}
	for _, rt := range (&Server{}).routes() {
		add(AggregatedAccess(rt.method, rt.pattern))
	}
	add(AggregatedAccess(http.MethodGet, openAPIPath))
	out := make([]metav1.APIResource, 0, len(order))
	for _, res := range order {
		slices.Sort(verbs[res])
		out = append(out, metav1.APIResource{Name: res, Kind: aggregatedKind, Verbs: verbs[res]})
	}
	return out
}

// discovery holds the static documents of the group, encoded once: they
// never depend on the cache, so every replica answers them at once.
type discovery struct {
	resourceList, group, groupList, aggregated []byte
	etag                                       string
}

const aggregatedDiscoveryType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

func newDiscovery() *discovery {
	gv := metav1.GroupVersion{Group: AggregatedGroup, Version: AggregatedVersion}
	gvd := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
	subs := aggregatedSubresources()
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
		APIResources: append([]metav1.APIResource{{Name: aggregatedResource, Kind: aggregatedKind, Verbs: metav1.Verbs{}}}, subs...),
	}
	group := metav1.APIGroup{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:     AggregatedGroup, Versions: []metav1.GroupVersionForDiscovery{gvd}, PreferredVersion: gvd,
	}
	groups := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{group}}
	kind := &metav1.GroupVersionKind{Group: AggregatedGroup, Version: AggregatedVersion, Kind: aggregatedKind}
	res := apidiscoveryv2.APIResourceDiscovery{Resource: aggregatedResource, ResponseKind: kind, Scope: apidiscoveryv2.ScopeCluster, Verbs: []string{}}
	for _, s := range subs {
		res.Subresources = append(res.Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: strings.TrimPrefix(s.Name, aggregatedResource+"/"), ResponseKind: kind, Verbs: s.Verbs,
		})
	}
	aggregated := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		Items: []apidiscoveryv2.APIGroupDiscovery{{
			ObjectMeta: metav1.ObjectMeta{Name: AggregatedGroup},
			Versions: []apidiscoveryv2.APIVersionDiscovery{{
				Version: AggregatedVersion, Resources: []apidiscoveryv2.APIResourceDiscovery{res}, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			}},
		}},
	}
	d := &discovery{resourceList: mustJSON(list), group: mustJSON(group), groupList: mustJSON(groups), aggregated: mustJSON(aggregated)}
	sum := sha256.Sum256(d.aggregated)
	d.etag = `"` + hex.EncodeToString(sum[:8]) + `"`
	return d
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// serve answers the discovery paths: /apis (aggregated discovery when
// asked for, as kube-apiserver does, else the group list), /apis/<group>
// and /apis/<group>/<version>. It reports whether path was one of them.
func (d *discovery) serve(w http.ResponseWriter, r *http.Request, path string) bool {
	var body []byte
	contentType := "application/json"
	switch strings.TrimSuffix(path, "/") {
	case "/apis":
		body = d.groupList
		if acceptsAggregated(r.Header.Values("Accept")) {
			body, contentType = d.aggregated, aggregatedDiscoveryType
			w.Header().Set("Vary", "Accept")
			w.Header().Set("ETag", d.etag)
			if r.Header.Get("If-None-Match") == d.etag {
				w.WriteHeader(http.StatusNotModified)
				return true
			}
		}
	case "/apis/" + AggregatedGroup:
		body = d.group
	case AggregatedPrefix:
		body = d.resourceList
	default:
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, errorf(http.StatusMethodNotAllowed, "%s allows only GET and HEAD.", path))
		return true
	}
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(body)
	return true
}

// acceptsAggregated says whether an Accept header asks for aggregated
// discovery v2, the form kube-apiserver fetches from an APIService.
func acceptsAggregated(accept []string) bool {
	for _, a := range accept {
		for part := range strings.SplitSeq(a, ",") {
			p := strings.ReplaceAll(part, " ", "")
			if strings.Contains(p, "g=apidiscovery.k8s.io") && strings.Contains(p, "v=v2;") && strings.Contains(p, "as=APIGroupDiscoveryList") {
				return true
			}
		}
	}
	return false
}

// aggregatedKey marks a request that came in under AggregatedPrefix.
type aggregatedKey struct{}

// viaAggregator says whether r came in under AggregatedPrefix.
func viaAggregator(r *http.Request) bool {
	v, _ := r.Context().Value(aggregatedKey{}).(bool)
	return v
}

// doors serves the contract at the root and, the same handler tree,
// under AggregatedPrefix, beside the discovery documents. No path is ever
// answered with a redirect: kube-apiserver turns a backend's 3xx into a
// 502, and Go's ServeMux would redirect a path that is not clean.
func (s *Server) doors(mux http.Handler) http.Handler {
	d := newDiscovery()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/apis") && d.serve(w, r, p) {
			return
		}
		if rest, ok := strings.CutPrefix(p, AggregatedPrefix); ok && strings.HasPrefix(rest, "/") {
			r2 := r.Clone(context.WithValue(r.Context(), aggregatedKey{}, true))
			r2.URL.Path, r2.URL.RawPath = rest, ""
			if r.URL.RawPath != "" {
				r2.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, AggregatedPrefix)
			}
			r = r2
		}
		if !clean(r.URL.Path) {
			instrument("unknown", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeError(w, notFound("No endpoint %s %s; see /api/v1/openapi.json.", r.Method, r.URL.Path))
			})).ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// clean says whether ServeMux would serve path as it is: no empty, "." or
// ".." segments (one trailing slash is allowed).
func clean(path string) bool {
	if !strings.HasPrefix(path, "/") {
		return false
	}
	segs := strings.Split(strings.TrimSuffix(path[1:], "/"), "/")
	for i, s := range segs {
		if s == "." || s == ".." || (s == "" && !(i == 0 && len(segs) == 1)) {
			return false
		}
	}
	return true
}
