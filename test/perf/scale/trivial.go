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
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"time"
)

// trivialRoute names the baseline in the latency table: a Go handler that
// returns a fixed envelope from a process of its own. On a saturated
// machine its latency is what scheduling alone costs.
const trivialRoute = "trivial handler (own process)"

var trivialBody = []byte(`{"status":200,"message":"success","fieldErrors":null,"data":{"list":[],"total":0,"pageNum":1,"pageSize":10}}`)

func serveTrivial(addr string) {
	// Stop on the run's interrupt even when started with SIGINT ignored,
	// as from a background shell: Notify installs the handler.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(trivialBody)
	})}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "trivial handler:", err)
		os.Exit(1)
	}
}
