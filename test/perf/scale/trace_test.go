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

package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/trace"
	"testing"
	"time"
)

// TestSplitFacade traces a server whose handler takes at least 2 ms, and
// finds each request on a kept-alive connection, with that time between
// the runtime seeing it and the answer.
func TestSplitFacade(t *testing.T) {
	const handlerTakes, requests = 2 * time.Millisecond, 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(handlerTakes)
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		t.Fatal(err)
	}
	for range requests {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		// As the scale run's clients do: the next request finds its
		// connection's goroutine waiting for it.
		time.Sleep(20 * time.Millisecond)
	}
	trace.Stop()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	split, err := splitFacade(path)
	if err != nil {
		t.Fatal(err)
	}
	// The first request of a connection is read without waiting for it.
	if n := len(split.answered); n != requests-1 {
		t.Fatalf("found %d answers on the kept-alive connection, want %d", n, requests-1)
	}
	if len(split.queued) != requests-1 {
		t.Fatalf("found %d waits for a processor, want %d", len(split.queued), requests-1)
	}
	for _, d := range split.answered {
		if d < handlerTakes {
			t.Fatalf("an answer took %v from the request, less than the handler's %v", d, handlerTakes)
		}
	}
	if split.span <= 0 {
		t.Fatal("the trace has no span")
	}
}
