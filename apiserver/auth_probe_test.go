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
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The probe that watches for an unreachable API server to come back stops
// with the server that runs it, not only when the API server answers.
func TestProbeStopsWithTheServer(t *testing.T) {
	c, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1", Timeout: time.Second}) // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	a := &kubeAuthorizer{client: c}
	ctx, cancel := context.WithCancel(context.Background())
	a.stopWith(ctx)
	a.down.Store(true)
	a.probe()
	time.Sleep(1500 * time.Millisecond) // a refused probe or two
	if !a.probing.Load() || !a.down.Load() {
		t.Fatal("the probe stopped while the API server was still unreachable")
	}
	cancel()
	for deadline := time.Now().Add(5 * time.Second); a.probing.Load(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the probe still runs 5 s after its server stopped")
		}
	}
}
