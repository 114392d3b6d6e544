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

package soak

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/edgeplane/edgeplane/test/framework/managers"
)

// facadeStub answers every request with the envelope of status, and
// counts the requests.
func facadeStub(t *testing.T, status int, data string) (addr string, calls *atomic.Int32) {
	calls = &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"status":%d,"message":"m","data":%s}`, status, data)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), calls
}

// A write reaches a manager that answers: past one killed (refused) or
// starting (503), never past one that refused the write itself (409).
func TestWriteFailsOver(t *testing.T) {
	down := func() string {
		srv := httptest.NewServer(http.NotFoundHandler())
		addr := strings.TrimPrefix(srv.URL, "http://")
		srv.Close()
		return addr
	}
	tests := []struct {
		name       string
		first      func() (string, *atomic.Int32)
		wantStatus int // 0: the write succeeded
		secondUsed bool
	}{
		{"the first answers", func() (string, *atomic.Int32) { return facadeStub(t, 200, `{"id":"x"}`) }, 0, false},
		{"the first is killed", func() (string, *atomic.Int32) { return down(), &atomic.Int32{} }, 0, true},
		{"the first has not synced", func() (string, *atomic.Int32) { return facadeStub(t, 503, `null`) }, 0, true},
		{"the first refuses the write", func() (string, *atomic.Int32) { return facadeStub(t, 409, `null`) }, 409, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, _ := tc.first()
			second, calls := facadeStub(t, 200, `{"id":"y"}`)
			r := &run{managers: &managers.Replicas{Facade: [2]string{first, second}}}
			var out struct {
				ID string `json:"id"`
			}
			err := r.write(context.Background(), "PATCH", "/api/v1/service/u", map[string]any{"factor": 3}, &out)
			var fe *facadeError
			switch {
			case tc.wantStatus == 0 && err != nil:
				t.Fatalf("write: %v", err)
			case tc.wantStatus != 0 && (!errors.As(err, &fe) || fe.Status != tc.wantStatus):
				t.Fatalf("write = %v; want the facade's %d", err, tc.wantStatus)
			}
			if used := calls.Load() > 0; used != tc.secondUsed {
				t.Errorf("the second manager called: %v; want %v", used, tc.secondUsed)
			}
			if tc.wantStatus == 0 && out.ID == "" {
				t.Error("the envelope's data was not decoded")
			}
		})
	}
}
