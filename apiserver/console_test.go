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
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func serveConsole(t *testing.T, on bool, method, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	return serveWith(t, Options{Console: on}, method, path, header)
}

func checkConsoleHeaders(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	h := rec.Header()
	if got := h.Get("Content-Security-Policy"); got != consoleCSP {
		t.Errorf("%s: CSP %q", what, got)
	}
	for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
		if !strings.Contains(h.Get("Content-Security-Policy"), want) {
			t.Errorf("%s: CSP lacks %s", what, want)
		}
	}
	if strings.Contains(h.Get("Content-Security-Policy"), "unsafe") {
		t.Errorf("%s: CSP allows something unsafe: %s", what, h.Get("Content-Security-Policy"))
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" {
		t.Errorf("%s: headers %v", what, h)
	}
}

// Every file of the console is served at /console/ and under the
// aggregated prefix, byte for byte, with its type and the security
// headers; a second request with the ETag is a 304.
func TestConsoleFiles(t *testing.T) {
	types := map[string]string{".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
	n := 0
	err := fs.WalkDir(consoleFiles, "console", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		want, _ := consoleFiles.ReadFile(p)
		name := strings.TrimPrefix(p, "console/")
		for _, prefix := range []string{"", AggregatedPrefix} {
			rec := serveConsole(t, true, http.MethodGet, prefix+consolePrefix+name, nil)
			if rec.Code != http.StatusOK || rec.Body.String() != string(want) {
				t.Errorf("%s%s: %d, %d bytes", prefix, name, rec.Code, rec.Body.Len())
				continue
			}
			checkConsoleHeaders(t, name, rec)
			ext := name[strings.LastIndex(name, "."):]
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), types[ext]) {
				t.Errorf("%s: Content-Type %q", name, rec.Header().Get("Content-Type"))
			}
			again := serveConsole(t, true, http.MethodGet, prefix+consolePrefix+name, http.Header{"If-None-Match": {rec.Header().Get("ETag")}})
			if again.Code != http.StatusNotModified {
				t.Errorf("%s with its ETag: %d", name, again.Code)
			}
		}
		return nil
	})
	if err != nil || n < 5 {
		t.Fatalf("%d files: %v", n, err)
	}
	index := serveConsole(t, true, http.MethodGet, consolePrefix, nil)
	if index.Code != http.StatusOK || !strings.Contains(index.Body.String(), `<script type="module" src="app.js">`) {
		t.Errorf("/console/: %d %s", index.Code, index.Body)
	}
	checkConsoleHeaders(t, "/console/", index)
}

// What is not a file of the console gets the envelope, with the headers;
// --console=false leaves no console at all.
func TestConsoleRefusals(t *testing.T) {
	for _, c := range []struct {
		on           bool
		method, path string
		code         int
	}{
		{true, http.MethodGet, "/console/nope.js", http.StatusNotFound},
		{true, http.MethodPost, "/console/app.js", http.StatusMethodNotAllowed},
		{true, http.MethodGet, "/console/../api/v1/node", http.StatusNotFound},
		{false, http.MethodGet, "/console/", http.StatusNotFound},
		{false, http.MethodGet, "/console/app.js", http.StatusNotFound},
	} {
		rec := serveConsole(t, c.on, c.method, c.path, nil)
		var env envelope
		if rec.Code != c.code || json.Unmarshal(rec.Body.Bytes(), &env) != nil || env.Status != c.code {
			t.Errorf("%v %s %s: %d %s", c.on, c.method, c.path, rec.Code, rec.Body)
		}
		if c.on && !strings.Contains(c.path, "..") { // an unclean path never reaches the console
			checkConsoleHeaders(t, c.path, rec)
		}
	}
	// Without the slash, a page that links on: no redirect (kube-apiserver
	// would answer a backend's redirect with a 502).
	rec := serveConsole(t, true, http.MethodGet, "/console", nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `href="console/"`) {
		t.Errorf("/console: %d %s", rec.Code, rec.Body)
	}
	checkConsoleHeaders(t, "/console", rec)
}

// The console's code turns no string into HTML and evaluates no string as
// code, and reaches the facade by relative URLs only: the CSP forbids the
// rest at run time, this says where in the code it would be.
func TestConsoleCodeRules(t *testing.T) {
	banned := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(\s*['"\x60]|https?://|fetch\(\s*['"\x60]/`)
	err := fs.WalkDir(consoleFiles, "console", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := consoleFiles.ReadFile(p)
		src := string(b)
		switch {
		case strings.HasSuffix(p, ".js"):
			// The SVG namespace is a name, not a URL fetched.
			src = strings.ReplaceAll(src, "'http://www.w3.org/2000/svg'", "")
			if m := banned.FindString(src); m != "" {
				t.Errorf("%s uses %q", p, m)
			}
		case strings.HasSuffix(p, ".html"):
			if regexp.MustCompile(`<script(?:[^>]*)>[^<]+</script>|\sstyle=|\son[a-z]+=`).MatchString(src) {
				t.Errorf("%s has inline script, style or a handler attribute", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
