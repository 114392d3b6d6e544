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
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// serve sends one request to a facade whose cache has not synced: what
// every replica answers in its first seconds.
func serveUnsynced(t *testing.T, method, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	return serveWith(t, Options{}, method, path, header)
}

// serveWith sends one request to an unsynced facade with these options.
func serveWith(t *testing.T, opts Options, method, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	s := &Server{auth: allowAll{}, log: logr.Discard(), opts: opts}
	req := httptest.NewRequest(method, "http://facade"+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec
}

// Discovery is static: it is answered before the cache has synced, while
// the routes that read the cache answer 503 under both prefixes.
func TestDiscoveryBeforeSync(t *testing.T) {
	rec := serveUnsynced(t, http.MethodGet, AggregatedPrefix, nil)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %q %s", AggregatedPrefix, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "APIResourceList" || list.GroupVersion != AggregatedGroup+"/"+AggregatedVersion {
		t.Errorf("resource list: kind %q groupVersion %q", list.Kind, list.GroupVersion)
	}
	got := map[string][]string{}
	for _, r := range list.APIResources {
		got[r.Name] = r.Verbs
	}
	want := map[string][]string{
		"api":                    {},
		"api/node":               {"create", "get"},
		"api/container":          {"get"},
		"api/service":            {"create", "delete", "get", "patch"},
		"api/provision-template": {"create", "get"},
		"api/openapi.json":       {"get"},
	}
	if len(got) != len(want) {
		t.Errorf("resources %v, want %v", got, want)
	}
	for name, verbs := range want {
		if v, ok := got[name]; !ok || !slices.Equal(v, verbs) {
			t.Errorf("resource %s has verbs %v (listed: %v), want %v", name, v, ok, verbs)
		}
	}

	rec = serveUnsynced(t, http.MethodGet, "/apis/"+AggregatedGroup, nil)
	var group metav1.APIGroup
	if err := json.Unmarshal(rec.Body.Bytes(), &group); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /apis/%s: %d %v", AggregatedGroup, rec.Code, err)
	}
	if group.Name != AggregatedGroup || group.PreferredVersion.Version != AggregatedVersion {
		t.Errorf("group %+v", group)
	}

	rec = serveUnsynced(t, http.MethodGet, "/apis", nil)
	var groups metav1.APIGroupList
	if err := json.Unmarshal(rec.Body.Bytes(), &groups); err != nil || rec.Code != http.StatusOK || len(groups.Groups) != 1 {
		t.Fatalf("GET /apis: %d %v %s", rec.Code, err, rec.Body)
	}

	for _, prefix := range []string{"", AggregatedPrefix} {
		rec = serveUnsynced(t, http.MethodGet, prefix+"/api/v1/node?page=1&pageSize=10", nil)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"status":503`) {
			t.Errorf("node list under %q before the sync: %d %s", prefix, rec.Code, rec.Body)
		}
	}
	rec = serveUnsynced(t, http.MethodPost, AggregatedPrefix, nil)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST %s: %d, Allow %q", AggregatedPrefix, rec.Code, rec.Header().Get("Allow"))
	}
}

// kube-apiserver fetches /apis of an APIService in the aggregated form
// and revalidates it with its ETag.
func TestAggregatedDiscovery(t *testing.T) {
	accept := http.Header{"Accept": {aggregatedDiscoveryType + ",application/json"}}
	rec := serveUnsynced(t, http.MethodGet, "/apis", accept)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != aggregatedDiscoveryType {
		t.Fatalf("GET /apis: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var doc apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Items) != 1 || doc.Items[0].Name != AggregatedGroup || len(doc.Items[0].Versions) != 1 {
		t.Fatalf("aggregated discovery %+v", doc)
	}
	res := doc.Items[0].Versions[0].Resources
	if len(res) != 1 || res[0].Resource != "api" || res[0].Scope != apidiscoveryv2.ScopeCluster || len(res[0].Subresources) != 5 {
		t.Errorf("resources %+v", res)
	}
	etag := rec.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	accept.Set("If-None-Match", etag)
	if rec := serveUnsynced(t, http.MethodGet, "/apis", accept); rec.Code != http.StatusNotModified {
		t.Errorf("revalidation: %d, want 304", rec.Code)
	}
}

// No path is answered with a redirect, which the aggregator would turn
// into a 502: paths that are not clean get the 404 envelope.
func TestNoRedirects(t *testing.T) {
	for _, path := range []string{
		"/api//v1/node", "/api/v1/./node", "/api/v1/x/../node", AggregatedPrefix + "//api/v1/node",
		AggregatedPrefix + "/api/v1/../v1/node", "/apis/" + AggregatedGroup + "//" + AggregatedVersion, AggregatedPrefix + "/api/v1/node//",
	} {
		rec := serveUnsynced(t, http.MethodGet, path, nil)
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"status":404`) {
			t.Errorf("GET %s: %d %s (Location %q)", path, rec.Code, rec.Body, rec.Header().Get("Location"))
		}
	}
}

// The OpenAPI document names the prefix it was fetched under as its
// server, so that a generated client calls the routes there.
func TestOpenAPIServer(t *testing.T) {
	for prefix, want := range map[string][]string{"": nil, AggregatedPrefix: {AggregatedPrefix}} {
		rec := serveUnsynced(t, http.MethodGet, prefix+openAPIPath, nil)
		var doc struct {
			OpenAPI string `json:"openapi"`
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
			Paths map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %v", prefix+openAPIPath, rec.Code, err)
		}
		var urls []string
		for _, s := range doc.Servers {
			urls = append(urls, s.URL)
		}
		if !slices.Equal(urls, want) || doc.OpenAPI == "" || len(doc.Paths) == 0 {
			t.Errorf("under %q: servers %v, want %v (openapi %q, %d paths)", prefix, urls, want, doc.OpenAPI, len(doc.Paths))
		}
	}
}

// The APIService trusts ca.crt beside the certificate when there is one,
// else the chain's last certificate.
func TestServingCA(t *testing.T) {
	pemOf := func(name string) string {
		return "-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString([]byte(name)) + "\n-----END CERTIFICATE-----\n"
	}
	for _, tc := range []struct {
		name, chain, ca, want string
	}{
		{"self-signed", pemOf("leaf"), "", pemOf("leaf")},
		{"a chain", pemOf("leaf") + pemOf("intermediate") + pemOf("root"), "", pemOf("root")},
		{"ca.crt beside it", pemOf("leaf") + pemOf("intermediate"), pemOf("root"), pemOf("root")},
		{"no certificate", "not PEM", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			certFile := filepath.Join(dir, "tls.crt")
			if err := os.WriteFile(certFile, []byte(tc.chain), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.ca != "" {
				if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte(tc.ca), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := servingCA(certFile)
			if tc.want == "" {
				if err == nil {
					t.Errorf("got %q, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
