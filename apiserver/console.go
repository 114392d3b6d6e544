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
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// The console's assets, embedded in the binary: it needs no network beyond
// the facade.
//
//go:embed console
var consoleFiles embed.FS

// consolePrefix is where the facade serves the console.
const consolePrefix = "/console/"

// consoleCSP allows the console's own files and nothing else: no inline
// script or style, no eval, no other origin, no framing.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ConsoleAccess is what kube-apiserver asks of a caller for the console
// under the aggregated prefix: resource console, list for its index
// (/console/) and get for a file (/console/app.js, the name).
func ConsoleAccess() []Permission {
	return []Permission{{Verb: "get", Resource: "console"}, {Verb: "list", Resource: "console"}}
}

type consoleAsset struct {
	body        []byte
	contentType string
	etag        string
}

// consoleHandler serves the embedded console. Its files are static and
// public (the data comes from the contract, which authorizes each call),
// so they are served to anyone, with the security headers on every answer.
func consoleHandler() http.Handler {
	assets := map[string]consoleAsset{}
	err := fs.WalkDir(consoleFiles, "console", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := consoleFiles.ReadFile(p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		if path.Ext(p) == ".js" {
			ct = "text/javascript; charset=utf-8" // the system's table may lack it
		}
		sum := sha256.Sum256(b)
		assets[strings.TrimPrefix(p, "console/")] = consoleAsset{body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic(err) // embedded at build time: cannot fail at run time
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", consoleCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			writeError(w, errorf(http.StatusMethodNotAllowed, "The console's files take GET or HEAD, not %s.", r.Method))
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, consolePrefix)
		if !ok {
			// /console without the slash: a page that links on, since the
			// assets' relative URLs need the slash, and a redirect through
			// kube-apiserver's proxy would not arrive.
			serveConsoleAsset(w, r, consoleAsset{contentType: "text/html; charset=utf-8",
				body: []byte(`<!doctype html><title>edgeplane</title><p>The console is at <a href="console/">console/</a>.</p>`)})
			return
		}
		if name == "" {
			name = "index.html"
		}
		a, found := assets[name]
		if !found {
			writeError(w, notFound("The console has no file %s.", r.URL.Path))
			return
		}
		// Revalidated every time (ETag), so that an upgraded manager's
		// console is never mixed with a cached older module.
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		serveConsoleAsset(w, r, a)
	})
}

func serveConsoleAsset(w http.ResponseWriter, r *http.Request, a consoleAsset) {
	w.Header().Set("Content-Type", a.contentType)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
