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
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary be the server process, as the tool is.
func TestMain(m *testing.M) {
	if isServe(os.Args[1:]) {
		os.Exit(serve(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// Both ways measure real beats, none failing, at a tiny size.
func TestMeasuresBeats(t *testing.T) {
	c := config{nodes: 5, interval: 200 * time.Millisecond, window: time.Second, connectRate: 200}
	for _, way := range []string{"http", "grpc"} {
		t.Run(way, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, err := measure(ctx, c, way)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(r)
			if r.beats == 0 || r.errors != 0 {
				t.Errorf("beats=%d errors=%d, want beats > 0 and no errors", r.beats, r.errors)
			}
		})
	}
}
