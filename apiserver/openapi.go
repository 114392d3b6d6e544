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
	_ "embed"
	"net/http"
)

// openAPIPath is where the document is served, at the root and under
// AggregatedPrefix.
const openAPIPath = "/api/v1/openapi.json"

// openAPI is the OpenAPI 3 document of the whole contract as served.
//
//go:embed openapi.json
var openAPI []byte

// openAPIAggregated is the document as served under AggregatedPrefix: its
// server URL is the prefix, so that a client generated from it calls the
// routes there.
var openAPIAggregated = append([]byte(`{"servers":[{"url":"`+AggregatedPrefix+`"}],`), bytes.TrimPrefix(bytes.TrimSpace(openAPI), []byte("{"))...)

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, errorf(http.StatusMethodNotAllowed, "%s allows only GET.", openAPIPath))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if viaAggregator(r) {
		_, _ = w.Write(openAPIAggregated)
		return
	}
	_, _ = w.Write(openAPI)
}
