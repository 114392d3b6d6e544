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
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/go-logr/logr"
)

// A panicking handler still answers with the envelope.
func TestPanicIsAnEnvelope(t *testing.T) {
	h := recoverPanics(logr.Discard(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/node", nil))
	var e envelope
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("body %q is not the envelope: %v", rec.Body.String(), err)
	}
	if rec.Code != http.StatusInternalServerError || e.Status != rec.Code || e.Data != nil || e.Message == "" {
		t.Fatalf("got %d %+v", rec.Code, e)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
}

// Errors of the API server map to the envelope's codes.
func TestFromKube(t *testing.T) {
	gr := schema.GroupResource{Group: "edge.edgeplane.io", Resource: "provisiontemplates"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "ProvisionTemplate"}, "x",
		field.ErrorList{field.Invalid(field.NewPath("spec", "name"), "a/b", "must be a single path segment")})
	for _, tc := range []struct {
		err   error
		code  int
		field string
	}{
		{apierrors.NewAlreadyExists(gr, "x"), http.StatusConflict, ""},
		{apierrors.NewConflict(gr, "x", errors.New("changed")), http.StatusConflict, ""},
		{apierrors.NewNotFound(gr, "x"), http.StatusNotFound, ""},
		{invalid, http.StatusBadRequest, "spec.name"},
		{apierrors.NewServiceUnavailable("etcd is gone"), http.StatusServiceUnavailable, ""},
		{apierrors.NewTooManyRequests("slow down", 1), http.StatusServiceUnavailable, ""},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, http.StatusServiceUnavailable, ""},
		{context.DeadlineExceeded, http.StatusServiceUnavailable, ""},
		{errors.New("something else"), http.StatusInternalServerError, ""},
	} {
		got := fromKube(tc.err)
		if got.status != tc.code {
			t.Errorf("%v: got %d, want %d", tc.err, got.status, tc.code)
		}
		if tc.field != "" && got.fields[tc.field] == "" {
			t.Errorf("%v: fieldErrors %v lack %s", tc.err, got.fields, tc.field)
		}
	}
}

// Until the cache has synced, the facade is not ready and its routes say
// so with a 503 envelope.
func TestNotReadyBeforeSync(t *testing.T) {
	h := (&Server{auth: allowAll{}}).Handler()
	for _, path := range []string{"/readyz", "/api/v1/node"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var e envelope
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusServiceUnavailable || e.Status != rec.Code {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("/healthz: %d", rec.Code)
	}
}
