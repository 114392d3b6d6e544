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
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/edgeplane/edgeplane/internal/shared/paths"
)

// checkRefusal checks what every refusal must be: a 4xx with a sentence,
// that renders as the envelope.
func checkRefusal(t *testing.T, err *apiError) {
	t.Helper()
	if err.status < 400 || err.status > 499 || err.msg == "" {
		t.Fatalf("refusal %d %q", err.status, err.msg)
	}
	rec := httptest.NewRecorder()
	writeError(rec, err)
	var e envelope
	if jerr := json.Unmarshal(rec.Body.Bytes(), &e); jerr != nil || e.Status != err.status || e.Data != nil {
		t.Fatalf("not an envelope: %s", rec.Body.String())
	}
}

// FuzzQuery feeds raw query strings to the parsing of every list endpoint.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{
		"", "pageNum=1&pageSize=10", "pageSize=-1", "pageSize=0", "pageNum=-3", "pageSize=1001", "pageNum=99999999999999999999",
		"serviceIds[]=a&serviceIds[]=b", "serviceIds=a", "nodeIds[]=", "basicInfo=true", "basicInfo=maybe", "pageNum=1&pageNum=2", "%zz", "name=%00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http hands handlers what it could parse; nothing to check
		}
		if p, aerr := parsePage(q); aerr != nil {
			checkRefusal(t, aerr)
			if len(aerr.fields) == 0 {
				t.Fatal("a paging refusal must name its field")
			}
		} else {
			if p.num < 1 || p.num > maxPageNum || (p.size != -1 && (p.size < 1 || p.size > maxPageSize)) {
				t.Fatalf("accepted %+v from %q", p, raw)
			}
			start, end := p.bounds(25)
			if start < 0 || end > 25 || start > end {
				t.Fatalf("bounds %d..%d", start, end)
			}
		}
		for _, name := range []string{"serviceIds", "nodeIds"} {
			if ids, aerr := parseIDs(q, name); aerr != nil {
				checkRefusal(t, aerr)
			} else if len(ids) == 0 || len(ids) > maxIDs {
				t.Fatalf("accepted %d ids", len(ids))
			}
		}
		if _, aerr := parseBool(q, "basicInfo"); aerr != nil {
			checkRefusal(t, aerr)
		}
	})
}

// FuzzBodies feeds raw bodies to the parsing of the three write endpoints.
func FuzzBodies(f *testing.F) {
	for _, s := range []string{
		`{"path":"/a/b"}`, `{"path":"/a/../b"}`, `{"path":7}`, `{}`, `null`, `[]`, `{"path":"/"}{}`, `{"name":"x","path":"/"}`,
		`{"name":"a/b","path":"/"}`, `{"imageRefs":["nginx@1#linux","a/b@2#sylixos"],"path":"/t"}`, `{"imageRefs":["bad"],"path":"/"}`,
		`{"imageRefs":["x@1#linux","x@2#linux"],"path":"/"}`, `{"imageRefs":null,"path":"/"}`, `{"imageRefs":[1],"path":"/"}`, `{"path":"/a","provisionIds":["x",""]}`, `{"path":"/a","provisionIds":null}`, "\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			return r
		}
		if p, ids, err := parseDeletePath(req()); err != nil {
			checkRefusal(t, err)
		} else if again, nerr := paths.Normalize(p); nerr != nil || again != p {
			t.Fatalf("delete path %q is not canonical", p)
		} else if ids != nil && slices.Contains(*ids, "") {
			t.Fatalf("accepted an empty provisionId in %q", body)
		}
		if full, err := parseFolder(req()); err != nil {
			checkRefusal(t, err)
		} else if again, nerr := paths.Normalize(full); nerr != nil || again != full || full == "/" {
			t.Fatalf("folder path %q is not a canonical folder", full)
		}
		if b, err := parseBatch(req(), "ns"); err != nil {
			checkRefusal(t, err)
		} else {
			if len(b.templates) == 0 || len(b.templates) > maxRefs {
				t.Fatalf("accepted %d templates", len(b.templates))
			}
			for _, tpl := range b.templates {
				if paths.CheckName(tpl.Spec.Name) != nil || string(tpl.Spec.Path) != b.folder {
					t.Fatalf("template %+v does not fit the tree", tpl.Spec)
				}
			}
		}
	})
}

// FuzzHandlerRefusals sends raw bodies and queries through the whole
// handler of a facade whose cache never syncs: every answer must be the
// envelope, whatever the input.
func FuzzHandlerRefusals(f *testing.F) {
	f.Add("GET", "/api/v1/node?pageSize=x", "")
	f.Add("DELETE", "/api/v1/service/path", `{"path":"/"}`)
	f.Add("POST", "/api/v1/provision-template/path-label/folder", `{`)
	f.Add("PATCH", "/api/v1/container/1", "")
	f.Add("GET", "/api/v1/../etc", "")
	s := &Server{auth: allowAll{}}
	h := s.Handler()
	f.Fuzz(func(t *testing.T, method, target, body string) {
		req, err := http.NewRequest(method, "http://facade"+target, bytes.NewReader([]byte(body)))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var e envelope
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			// ServeMux answers a non-canonical path with a redirect of its own.
			if rec.Code == http.StatusMovedPermanently || rec.Code == http.StatusTemporaryRedirect {
				return
			}
			t.Fatalf("%s %s: %d %q is not an envelope", method, target, rec.Code, rec.Body.String())
		}
		if e.Status != rec.Code || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: %d %+v", method, target, rec.Code, e)
		}
	})
}
